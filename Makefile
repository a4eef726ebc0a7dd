# Thin wrapper over CMake; see README.md.
#   make          build build/arbor (release)
#   make test     unit tests + sanitizer build + fuzz corpus replay + install test
#   make demo     build the command only and run the main job on its built-in default
#   make bench    build and run the benchmarks (not part of test)
#   make docs     build the API reference with Doxygen (build/docs/html/index.html)
#   make fuzz     build the libFuzzer targets with clang (build-fuzz/)
#   make deps     install what the build and tests need (Debian, as root: scripts/deps.sh)
#   make format   clang-format every source file
# The build prints warnings and errors only; V=1 shows every command.
# CMake finds the libraries and names any that is missing; make never
# installs anything (scripts/deps.sh --install does, when asked).

JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE ?= cmake
BUILD_TYPE ?= Release
V ?= 0

ifeq ($(V),0)
CONFIGURE_OUT = >/dev/null
BUILD_FLAGS = -- --no-print-directory
RULE_MESSAGES = -DCMAKE_RULE_MESSAGES=OFF -DCMAKE_TARGET_MESSAGES=OFF
else
CONFIGURE_OUT =
BUILD_FLAGS = -- VERBOSE=1
RULE_MESSAGES = -DCMAKE_RULE_MESSAGES=ON -DCMAKE_TARGET_MESSAGES=ON
endif

.PHONY: all deps configure build asan test test-release test-asan demo bench docs fuzz format clean

all: build

deps:
	@sh scripts/deps.sh --install

configure:
	@$(CMAKE) -S . -B build -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(RULE_MESSAGES) $(CONFIGURE_OUT)

build: configure
	@$(CMAKE) --build build -j $(JOBS) $(BUILD_FLAGS)

asan:
	@$(CMAKE) -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DARB_SANITIZE=ON $(RULE_MESSAGES) $(CONFIGURE_OUT)
	@$(CMAKE) --build build-asan -j $(JOBS) $(BUILD_FLAGS)

test-release: build
	@cd build && ctest --output-on-failure -j $(JOBS) --timeout 600

test-asan: asan
	@cd build-asan && ctest --output-on-failure -j $(JOBS) --timeout 900

test: test-release test-asan
	@echo "make test: release and sanitizer runs passed"

demo: configure
	@$(CMAKE) --build build -j $(JOBS) --target arbor_cli $(BUILD_FLAGS)
	@sh scripts/demo.sh build/arbor

bench: build
	@sh scripts/bench.sh build

docs: configure
	@$(CMAKE) --build build --target docs $(BUILD_FLAGS)

fuzz:
	@sh scripts/deps.sh --fuzz
	@CC=clang $(CMAKE) -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DARB_FUZZ=ON $(RULE_MESSAGES) $(CONFIGURE_OUT)
	@$(CMAKE) --build build-fuzz -j $(JOBS) $(BUILD_FLAGS)
	@echo "fuzzers in build-fuzz/; see docs/testing.md"

format:
	@clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf build build-asan build-fuzz
