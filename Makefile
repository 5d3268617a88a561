# ProcAnim: every install step lives here, so a fresh clone needs only `make demo` and `make test`.
SHELL := /bin/bash
VERSION := $(shell sed -n 's/^version = "\(.*\)"/\1/p' blender_manifest.toml)
MUJOCO := 4.0.0
# MuJoCo's wheel platforms (Blender's linux-x64, linux-arm64, windows-x64, macos-arm64) and Pythons.
WHEEL_PLATFORMS := manylinux_2_28_x86_64 manylinux_2_28_aarch64 win_amd64 macosx_11_0_arm64
WHEEL_PYTHONS := 3.11 3.13
BPY_DIR = .venv/lib/python3.11/site-packages/bpy/5.0
BLENDER_EXT = $(BPY_DIR)/scripts/addons_core/bl_pkg/cli/blender_ext.py
VALID_TAGS = $(BPY_DIR)/scripts/modules/_bpy_internal/extensions/tags.py
CLI := scripts/procanim_cli.py
# Blender versions the suite runs on, each in its own venv with the Python that version ships:
# .venv is 5.0 (also the demo, build and lint venv), the others are .venv-<version>.
BLENDER_VERSIONS := 4.2 4.5 5.0 5.2 5.3
venv_of = $(if $(filter 5.0,$1),.venv,.venv-$1)
python_of = $(if $(filter 4.% 5.0,$1),3.11,3.13)
TEST_VENVS := $(foreach version,$(BLENDER_VERSIONS),$(call venv_of,$(version)))

.PHONY: demo showcase test test-blender bench build lint venvs system-deps clean genomes fuzz

# ---------------------------------------------------------------- environments
# scripts/make_venv.sh finds the right Python by itself (pyenv included) and says what is missing.
.venv/.stamp: requirements/bpy-5.0.txt
	bash scripts/make_venv.sh .venv 3.11 $<

.venv-%/.stamp: requirements/bpy-%.txt
	bash scripts/make_venv.sh .venv-$* $(call python_of,$*) $<

.venv-pytest-blender/.stamp: requirements/pytest-blender.txt
	bash scripts/make_venv.sh .venv-pytest-blender 3.11 $<

system-deps:
	bash scripts/ensure_system_deps.sh

venvs: system-deps $(addsuffix /.stamp,$(TEST_VENVS)) .venv-pytest-blender/.stamp

# ---------------------------------------------------------------- the two commands
# One line per generator: each bakes its showcase scene to out/<name>.blend and renders out/<name>.mp4.
demo: system-deps .venv/.stamp
	mkdir -p out
	.venv/bin/python $(CLI) dance --camera --plot out/dancer_balance.png --compare out/dancer_strategies.png --fps 12 --out out/dancer.blend --render out/dancer.mp4 --engine workbench --resolution 480x270
	.venv/bin/python $(CLI) dance --camera --sequence first_position,demi_plie,tendu_side:right,second_position,demi_plie,first_position,fifth_position,releve,weight_shift,tendu_front:right,developpe_side_90:right,arabesque_45:right,retire:right,releve:right --plot out/dancer_enchainement.png --fps 12 --out out/dancer_enchainement.blend --render out/dancer_enchainement.mp4 --engine workbench --resolution 480x270
	.venv/bin/python $(CLI) ik --bones 4 --length 96 --out out/ik.blend --render out/ik.mp4 --engine workbench
	.venv/bin/python $(CLI) juggle --siteswap '<3p|3p>' --prop club --loops 1 --out out/juggling.blend --render out/juggling.mp4 --engine workbench --resolution 480x270
	.venv/bin/python $(CLI) juggle --rig rigify --siteswap 3 --prop club --loops 1 --out out/juggling_rigify.blend --render out/juggling_rigify.mp4 --engine workbench --resolution 480x270
	.venv/bin/python $(CLI) mirror --stage --rays 16 --travel-frames 16 --frames 16 --out out/mirrors.blend --render out/mirrors.mp4 --engine cycles --samples 16 --resolution 320x180
	.venv/bin/python $(CLI) fly train --population 40 --generations 5 --flight-time 1 --genome out/fly_trained.npz --curve out/fly_training.png
	.venv/bin/python $(CLI) fly bake --duration 6 --chase --camera --out out/fly.blend --render out/fly.mp4 --engine workbench --resolution 480x270
	.venv/bin/python $(CLI) fly bake --genome presets/fly/stroke_hover.npz --duration 3 --camera --out out/fly_hover.blend --render out/fly_hover.mp4 --engine cycles --samples 8 --resolution 480x270
	.venv/bin/python $(CLI) fly bake --genome presets/fly/stroke_steer.npz --duration 6 --chase --camera --out out/fly_chase.blend --render out/fly_chase.mp4 --engine cycles --samples 8 --resolution 480x270
	.venv/bin/python $(CLI) simulate --scene jelly --preset Jelly --length 48 --out out/jelly.blend --render out/jelly.mp4 --engine workbench --resolution 480x270
	.venv/bin/python $(CLI) simulate --scene rope --preset Rope --length 72 --out out/rope.blend --render out/rope.mp4 --engine workbench --resolution 480x270
	.venv/bin/python $(CLI) simulate --scene jelly --preset "Cloth Bag" --length 48 --out out/cloth_bag.blend --render out/cloth_bag.mp4 --engine workbench --resolution 480x270
	.venv/bin/python $(CLI) simulate --scene sheet --length 48 --out out/jelly_sheet.blend --render out/jelly_sheet.mp4 --engine workbench --resolution 480x270
	.venv/bin/python $(CLI) simulate --scene pile --cubes 50 --pour-interval 4 --static-friction 0.6 --contacts sequential --particle-radius 0.07 --length 960 --out out/rigid_pile.blend --render out/rigid_pile.mp4 --engine workbench --resolution 480x270

# The README image: one still of each demo scene, tiled (run after make demo).
showcase: .venv/.stamp
	.venv/bin/python scripts/showcase.py

# Unit tests once (they do not touch Blender), the Blender suite on every version, as independent pytest
# jobs side by side on one lane per core, longest first (scripts/run_suite.py). JOBS=1: one lane;
# STAGES="unit 5.3": only those stages; RECORD=1: rewrite tests/suite_times.json with this run's seconds.
JOBS ?=
STAGES ?=
RECORD ?=
test: venvs dist/.stamp
	.venv/bin/python scripts/run_suite.py $(if $(JOBS),--jobs $(JOBS)) $(foreach stage,$(STAGES),--stage $(stage)) \
		$(if $(RECORD),--record) $(foreach version,$(BLENDER_VERSIONS),--blender $(version)=$(call venv_of,$(version)))

# The suite inside a real Blender binary through pytest-blender (Blender's Python needs pytest).
BLENDER ?= scripts/blender
test-blender: .venv-pytest-blender/.stamp .venv/.stamp
	.venv-pytest-blender/bin/python -m pytest -q tests/blender --blender-executable $(BLENDER)

# A larger fuzz run than CI's (tests/blender/test_fuzz.py): every operator, FUZZ_CASES hostile argument
# sets each plus its defaults, a random seed unless FUZZ_SEED is given; every case lands in out/fuzz.jsonl.
FUZZ_CASES ?= 30
FUZZ_SEED ?= random
fuzz: .venv/.stamp
	mkdir -p out
	rm -f out/fuzz.jsonl
	PROCANIM_FUZZ_CASES=$(FUZZ_CASES) PROCANIM_FUZZ_SEED=$(FUZZ_SEED) PROCANIM_FUZZ_DEFAULTS=1 \
		PROCANIM_FUZZ_REPORT=$(CURDIR)/out/fuzz.jsonl .venv/bin/python -m pytest -q tests/blender/test_fuzz.py
	.venv/bin/python tests/blender/fuzz.py --summary out/fuzz.jsonl

# Retrain every shipped stroke-mode fly genome from presets/fly/recipes.toml (fixed seeds), bit for bit;
# GENOME_ARGS="--workers 2" scores each generation on a local Dask cluster (same files).
genomes: .venv/.stamp
	.venv/bin/python -m addon.fly genomes $(GENOME_ARGS)

bench: venvs
	rm -f out/bench.jsonl
	.venv/bin/python bench/run_all.py

# ---------------------------------------------------------------- release
wheels/.stamp: blender_manifest.toml | .venv/.stamp
	mkdir -p wheels
	for python in $(WHEEL_PYTHONS); do for platform in $(WHEEL_PLATFORMS); do \
		.venv/bin/python -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
			--python-version $$python --platform $$platform -d wheels mujoco-core==$(MUJOCO) || exit 1; \
	done; done
	touch $@

# One zip per platform (Blender's --split-platforms), each validated by Blender's own validator.
dist/.stamp: wheels/.stamp blender_manifest.toml $(shell git ls-files '*.py' '*.toml' 'presets/*' 2>/dev/null) | .venv/.stamp
	rm -rf dist
	mkdir -p dist
	.venv/bin/python $(BLENDER_EXT) build --source-dir . --output-dir dist --valid-tags $(VALID_TAGS) \
		--split-platforms > dist/build.log || { cat dist/build.log; exit 1; }
	for zip in dist/procanim-$(VERSION)-*.zip; do \
		.venv/bin/python $(BLENDER_EXT) validate $$zip > /dev/null || exit 1; \
	done
	touch $@

build: dist/.stamp
	@echo "Built and validated (pick the zip for your platform; Intel macs and Windows on ARM have no dancer):"
	@.venv/bin/python -c "import os, sys; [print(f'  {p:<44} {os.path.getsize(p) / 2**20:5.1f} MB') for p in sys.argv[1:]]" \
		dist/procanim-$(VERSION)-*.zip

lint: .venv/.stamp
	.venv/bin/ruff check .

clean:
	rm -rf dist wheels out
