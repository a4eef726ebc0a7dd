# Thin wrapper over CMake; see README.md.
#   make          build build/arbor (release)
#   make test     unit tests + sanitizer build + fuzz corpus replay
#   make demo     build and run the main job on its built-in default
#   make bench    build and run the benchmarks (not part of test)
#   make fuzz     build the libFuzzer targets with clang (build-fuzz/)
#   make format   clang-format every source file

JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE ?= cmake
BUILD_TYPE ?= Release

.PHONY: all deps build asan test test-release test-asan demo bench fuzz format clean

all: build

deps:
	@sh scripts/deps.sh

build: deps
	@$(CMAKE) -S . -B build -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) >/dev/null
	@$(CMAKE) --build build -j $(JOBS)

asan: deps
	@$(CMAKE) -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DARB_SANITIZE=ON >/dev/null
	@$(CMAKE) --build build-asan -j $(JOBS)

test-release: build
	@cd build && ctest --output-on-failure -j $(JOBS) --timeout 600

test-asan: asan
	@cd build-asan && ctest --output-on-failure -j $(JOBS) --timeout 900

test: test-release test-asan
	@echo "make test: release and sanitizer runs passed"

demo: build
	@sh scripts/demo.sh build/arbor

bench: build
	@sh scripts/bench.sh build

fuzz:
	@sh scripts/deps.sh --optional
	@CC=clang $(CMAKE) -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DARB_FUZZ=ON >/dev/null
	@$(CMAKE) --build build-fuzz -j $(JOBS)
	@echo "fuzzers in build-fuzz/; see docs/testing.md"

format:
	@clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf build build-asan build-fuzz
