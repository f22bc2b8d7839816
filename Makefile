# Thin wrapper over CMake/ctest. `make test` is the whole suite (.ci/run calls it).
BUILD ?= build
JOBS ?= $(shell nproc)
TEST_PY ?= 3.11
TEST_PADDLE ?= paddlepaddle==3.2.0
export IMGTOOL_TEST_BASE ?= imgtool-base/debian:bookworm-py3

.PHONY: all deps build build-cli fixtures test test-sanitized test-asan fuzz unit demo bench clean

all: build

deps:
	scripts/install-deps.sh

build:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build $(BUILD) -j $(JOBS)

# Only the imgtool binary (what `make demo` runs): none of the test binaries.
build-cli:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build $(BUILD) -j $(JOBS) --target imgtool

# Local base image + wheelhouse (cached under ~/.cache/imgtool).
fixtures:
	scripts/make-base.sh $(IMGTOOL_TEST_BASE) >/dev/null
	scripts/wheelhouse.sh $(TEST_PY) $(TEST_PADDLE) >/dev/null

# The whole suite once (normal build). The sanitizer half (`make test-sanitized`: unit tests
# under ASan+UBSan and a short run of every fuzz target, one clang build in build-fuzz) is not
# part of it yet: that build has not been run to completion on the 2-core CI machine.
test: deps build fixtures
	IMGTOOL_TEST_WHEELHOUSE=$$(scripts/wheelhouse.sh $(TEST_PY) $(TEST_PADDLE)) \
	  ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS) --timeout 1200

test-sanitized:
	JOBS=$(JOBS) scripts/test-sanitized.sh

# The whole suite (integration included) under ASan+UBSan, built with gcc into build-asan.
test-asan: deps fixtures
	cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DIMGTOOL_SANITIZE=address,undefined >/dev/null
	cmake --build build-asan -j $(JOBS)
	IMGTOOL_TEST_WHEELHOUSE=$$(scripts/wheelhouse.sh $(TEST_PY) $(TEST_PADDLE)) \
	  ASAN_OPTIONS=$${ASAN_OPTIONS:-detect_leaks=1:suppressions=$(CURDIR)/tests/sanitizer/asan.supp} UBSAN_OPTIONS=$${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
	  ctest --test-dir build-asan --output-on-failure -j $(JOBS) --timeout 2400

# Long fuzz runs with a table of executions, crashes and coverage (bench/fuzz.sh).
fuzz:
	bench/fuzz.sh

unit: build
	ctest --test-dir $(BUILD) --output-on-failure -L unit -j $(JOBS)

# The main job on the embedded default: build + smoke + sign + publish a small
# matrix into a loopback registry and an OCI layout that it starts/creates itself.
demo: deps build-cli fixtures
	scripts/demo.sh

clean:
	rm -rf $(BUILD) build-asan build-fuzz
