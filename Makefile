# SPDX-License-Identifier: MIT
# Thin wrapper over CMake; see README.md. Build trees: build/ (release with
# debug info), build-asan/ (ASan+UBSan), build-tsan/ (TSan), build-fuzz/.
JOBS ?= $(shell nproc)
BUILD ?= build
PREFIX ?= /usr/local
CMAKE_FLAGS ?=

.PHONY: all deps build demo report-screenshot check check-unit check-sanitize check-asan check-tsan check-format \
        check-packages bench fuzz install clean crash-soak tm-stress

all: build

deps:
	@scripts/install-deps.sh

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=$(PREFIX) $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

demo: build
	@scripts/demo.sh $(BUILD)

report-screenshot: build
	@scripts/report-screenshot.sh $(BUILD)

check: check-unit check-sanitize

check-unit: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

check-sanitize: check-asan check-tsan

check-asan: deps
	@cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DSTROBE_SANITIZE=address >/dev/null
	@cmake --build build-asan -j $(JOBS)
	@cd build-asan && ctest --output-on-failure -j $(JOBS) -LE no-asan

check-tsan: deps
	@cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=Debug -DSTROBE_SANITIZE=thread >/dev/null
	@cmake --build build-tsan -j $(JOBS)
	@cd build-tsan && ctest --output-on-failure -j $(JOBS) -L tsan

# The Debian packages (debian/): built, checked by lintian, installed into a
# fresh Debian 12 root where the demo runs (scripts/check-packages.sh; root)
check-packages: deps
	@scripts/check-packages.sh

# Long crash verification of libstrobe-petra (docs/petra-crash.md) on the
# release build: CRASHES kill rounds, then CRASHES power-failure rounds.
CRASHES ?= 20000
crash-soak: build
	@mkdir -p $(BUILD)/crash-soak
	@$(BUILD)/bin/petra-crash --mode kill --crashes $(CRASHES) --dir $(BUILD)/crash-soak
	@$(BUILD)/bin/petra-crash --mode powerfail --crashes $(CRASHES) --dir $(BUILD)/crash-soak

# Long run of libstrobe-tm's reclamation cases (tests/tm/test_tm_reclaim.c)
# and of the snapshot-extension case of tests/tm/test_tm.c: each case for
# TM_STRESS_SECONDS on the release build.
TM_STRESS_SECONDS ?= 120
tm-stress: build
	@cd $(BUILD) && for c in stack_pop_free middle_node_free nested_free cancelled_free_keeps_node; do \
	    STROBE_TM_STRESS_SECONDS=$(TM_STRESS_SECONDS) bin/test_tm_reclaim $$c || exit 1; done
	@cd $(BUILD) && STROBE_TM_HTM=0 STROBE_TM_STRESS_SECONDS=$(TM_STRESS_SECONDS) bin/test_tm extension_keeps_counter

bench: build
	@bench/run.sh $(BUILD)
	@bench/command.py $(BUILD)
	@bench/export.sh $(BUILD)
	@bench/report_html.sh $(BUILD)
	@bench/diff.sh $(BUILD)
	@bench/real.sh $(BUILD)
	@bench/bbtrace.sh $(BUILD)
	@bench/locks.sh $(BUILD)
	@bench/openmp.sh $(BUILD)
	@bench/blame.sh $(BUILD)
	@bench/blame_attribution.sh $(BUILD)
	@bench/instrument.sh $(BUILD)
	@tests/instrument/opari2_compare.sh $(BUILD)
	@bench/bb_refill.sh $(BUILD)
	@bench/tm/run.sh $(BUILD)
	@bench/malloc/run.sh $(BUILD)
	@bench/sample/run.sh $(BUILD)
	@bench/attach.sh $(BUILD)
	@bench/mpi.sh $(BUILD)
	@bench/merge.sh $(BUILD)
	@bench/monitor/run.sh $(BUILD)
	@bench/monitor/publish.sh $(BUILD)
	@bench/petra/run.sh $(BUILD)
	@bench/pause.sh $(BUILD)
	@bench/chunks.sh $(BUILD)
	@bench/monitor/remote_write.sh $(BUILD)
	@bench/influx/run.sh $(BUILD)
	@bench/postgres/run.sh $(BUILD)

fuzz: deps
	@CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTROBE_FUZZ=ON >/dev/null
	@cmake --build build-fuzz -j $(JOBS) --target fuzzers
	@scripts/fuzz.sh build-fuzz $${FUZZ_SECONDS:-60}

install: build
	@cmake --install $(BUILD)

clean:
	rm -rf build build-asan build-tsan build-fuzz
