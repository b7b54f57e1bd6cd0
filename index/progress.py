"""Progress bars with ETA for long steps (tqdm on stderr), silent when asked or when there is no work."""


from tqdm import tqdm


class Progress:
    def __init__(self, desc: str, total: int | None, unit: str = "it", show: bool = True, position: int | None = None):
        """`total` None: a count and a rate, no ETA (the records of a corpus file are not known before
        it is read). `position`: the bar's line when bars of two threads run at once (0 and 1)."""
        self._bar = tqdm(total=total, desc=desc, unit=unit, disable=not show or total == 0,
                         dynamic_ncols=True, leave=True, mininterval=0.5, position=position)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, *exc) -> None:
        if exc_type is not None:  # the error message follows: no half-done bar left above it
            self._bar.leave = False
        self._bar.close()

    def update(self, n: int = 1) -> None:
        self._bar.update(n)

    def usearch_callback(self, processed: int, total: int) -> bool:
        """USearch reports absolute counts; tqdm wants increments. Returning True continues."""
        self._bar.update(max(0, processed - self._bar.n))
        return True
