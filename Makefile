# ProcAnim: every install step lives here, so a fresh clone needs only `make demo` and `make test`.
SHELL := /bin/bash
PYTHON ?= python3
VERSION := $(shell sed -n 's/^version = "\(.*\)"/\1/p' blender_manifest.toml)
ZIP := dist/procanim-$(VERSION).zip
MUJOCO := 4.0.0
WHEEL_PLATFORMS := manylinux_2_28_x86_64 win_amd64 macosx_11_0_arm64
BPY_DIR = .venv/lib/python3.11/site-packages/bpy/5.0
BLENDER_EXT = $(BPY_DIR)/scripts/addons_core/bl_pkg/cli/blender_ext.py
VALID_TAGS = $(BPY_DIR)/scripts/modules/_bpy_internal/extensions/tags.py
CLI := scripts/procanim_cli.py
# Blender versions the suite runs on, each in its own venv.
TEST_VENVS := .venv-4.2 .venv-4.5 .venv

.PHONY: demo showcase test test-blender bench build lint venvs system-deps clean

# ---------------------------------------------------------------- environments
.venv/.stamp: requirements/bpy-5.0.txt
	$(PYTHON) -m venv .venv
	.venv/bin/pip install -q -r $<
	touch $@

.venv-%/.stamp: requirements/bpy-%.txt
	$(PYTHON) -m venv .venv-$*
	.venv-$*/bin/pip install -q -r $<
	touch $@

.venv-pytest-blender/.stamp: requirements/pytest-blender.txt
	$(PYTHON) -m venv .venv-pytest-blender
	.venv-pytest-blender/bin/pip install -q -r $<
	touch $@

system-deps:
	bash scripts/ensure_system_deps.sh

venvs: system-deps $(addsuffix /.stamp,$(TEST_VENVS)) .venv-pytest-blender/.stamp

# ---------------------------------------------------------------- the two commands
# One line per generator: each bakes its showcase scene to out/<name>.blend and renders out/<name>.mp4.
demo: system-deps .venv/.stamp
	mkdir -p out
	.venv/bin/python $(CLI) dance --camera --plot out/dancer_balance.png --compare out/dancer_strategies.png --fps 12 --out out/dancer.blend --render out/dancer.mp4 --engine workbench --resolution 480x270
	.venv/bin/python $(CLI) ik --bones 4 --length 96 --out out/ik.blend --render out/ik.mp4 --engine workbench
	.venv/bin/python $(CLI) juggle --siteswap '<3p|3p>' --prop club --loops 1 --out out/juggling.blend --render out/juggling.mp4 --engine workbench --resolution 480x270
	.venv/bin/python $(CLI) mirror --stage --rays 16 --travel-frames 16 --frames 16 --out out/mirrors.blend --render out/mirrors.mp4 --engine cycles --samples 16 --resolution 320x180
	.venv/bin/python $(CLI) fly train --population 40 --generations 5 --flight-time 1 --genome out/fly_trained.npz --curve out/fly_training.png
	.venv/bin/python $(CLI) fly bake --duration 6 --chase --camera --out out/fly.blend --render out/fly.mp4 --engine workbench --resolution 480x270
	.venv/bin/python $(CLI) simulate --scene jelly --preset Jelly --length 48 --out out/jelly.blend --render out/jelly.mp4 --engine workbench --resolution 480x270
	.venv/bin/python $(CLI) simulate --scene rope --preset Rope --length 72 --out out/rope.blend --render out/rope.mp4 --engine workbench --resolution 480x270
	.venv/bin/python $(CLI) simulate --scene pile --length 60 --out out/rigid_pile.blend --render out/rigid_pile.mp4 --engine workbench --resolution 480x270

# The README image: one still of each demo scene, tiled (run after make demo).
showcase: .venv/.stamp
	.venv/bin/python scripts/showcase.py

# Unit tests once (they do not touch Blender), the Blender suite on every version.
test: venvs $(ZIP)
	.venv/bin/python -m pytest -q tests/unit
	@for venv in $(TEST_VENVS); do \
		echo "== Blender tests on $$($$venv/bin/python -c 'import bpy; print(bpy.app.version_string)' 2>/dev/null)"; \
		$$venv/bin/python -m pytest -q tests/blender || exit 1; \
	done

# The suite inside a real Blender binary through pytest-blender (Blender's Python needs pytest).
BLENDER ?= scripts/blender
test-blender: .venv-pytest-blender/.stamp .venv/.stamp
	.venv-pytest-blender/bin/python -m pytest -q tests/blender --blender-executable $(BLENDER)

bench: venvs
	rm -f out/bench.jsonl
	.venv/bin/python bench/run_all.py

# ---------------------------------------------------------------- release
wheels/.stamp:
	mkdir -p wheels
	for platform in $(WHEEL_PLATFORMS); do \
		$(PYTHON) -m pip download -q --no-deps --only-binary=:all: --python-version 3.11 \
			--platform $$platform -d wheels mujoco-core==$(MUJOCO) || exit 1; \
	done
	touch $@

$(ZIP): .venv/.stamp wheels/.stamp blender_manifest.toml $(shell git ls-files '*.py' '*.toml' 'presets/*' 2>/dev/null)
	mkdir -p dist
	.venv/bin/python $(BLENDER_EXT) build --source-dir . --output-dir dist --valid-tags $(VALID_TAGS)
	.venv/bin/python $(BLENDER_EXT) validate $(ZIP)

build: $(ZIP)

lint: .venv/.stamp
	.venv/bin/ruff check .

clean:
	rm -rf dist wheels out
