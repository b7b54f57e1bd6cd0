"""A dict that forgets its least recently stored or used entries beyond a size."""

from __future__ import annotations

from collections import OrderedDict


class LRU(OrderedDict):
    def __init__(self, size: int):
        super().__init__()
        self.size = size

    def put(self, key, value):
        self[key] = value
        self.move_to_end(key)
        while len(self) > self.size:
            self.popitem(last=False)

    def get_or(self, key, make):
        """The value of `key`, made by `make()` and stored when absent; either way the most recent."""
        if key in self:
            self.move_to_end(key)
            return self[key]
        value = make()
        self.put(key, value)
        return value
