# Thin wrapper over CMake/ctest. `make test` is the whole suite (.ci/run calls it).
BUILD ?= build
JOBS ?= $(shell nproc)
TEST_PY ?= 3.11
TEST_PADDLE ?= paddlepaddle==3.3.1
export IMGTOOL_TEST_BASE ?= imgtool-base/debian:bookworm-py3

.PHONY: all deps deps-demo build build-cli fixtures demo-fixtures test test-sanitized test-asan fuzz unit demo bench clean

all: build

deps:
	scripts/install-deps.sh

# What `make demo` needs only (no fuzz compilers, no browser, no test-only Python packages).
deps-demo:
	scripts/install-deps.sh --demo

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

# The whole suite, once; then the disk it left behind (scripts/footprint.sh).
# Here: in build/ (gcc, the binary `make demo` runs). With CI=true (the
# CI runner, .ci/run): in the sanitized clang build instead (test-asan), so every test,
# integration included, runs once and under ASan+UBSan, with each fuzz target's short run;
# build-cli compiles the release binary with gcc, which the four GPU integration tests run
# (their test code sanitized; tests/CMakeLists.txt says why).
ifeq ($(CI),true)
test: deps build-cli test-asan
else
test: deps build fixtures
	IMGTOOL_TEST_WHEELHOUSE=$$(scripts/wheelhouse.sh $(TEST_PY) $(TEST_PADDLE)) \
	  ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS) --timeout 1200; \
	  rc=$$?; scripts/footprint.sh; exit $$rc
endif

# Unit tests and the fuzz targets' short runs under ASan+UBSan (the clang build in build-fuzz).
test-sanitized:
	SANITIZED_LABELS='unit|fuzz' JOBS=$(JOBS) scripts/test-sanitized.sh

# The whole suite (integration included) under ASan+UBSan, in the same clang build.
test-asan: deps build-cli fixtures
	IMGTOOL_TEST_WHEELHOUSE=$$(scripts/wheelhouse.sh $(TEST_PY) $(TEST_PADDLE)) JOBS=$(JOBS) scripts/test-sanitized.sh; \
	  rc=$$?; scripts/footprint.sh; exit $$rc

# Long fuzz runs with a table of executions, crashes and coverage (bench/fuzz.sh).
fuzz:
	bench/fuzz.sh

unit: build
	ctest --test-dir $(BUILD) --output-on-failure -L unit -j $(JOBS)

# The main job on the embedded default: build + smoke + sign + publish a small
# matrix into a loopback registry and an OCI layout that it starts/creates itself.
# The compile (CPU) and the fixtures (debootstrap, downloads, the CUDA base) run side by side.
demo: deps-demo
	$(MAKE) --no-print-directory -j 2 build-cli demo-fixtures
	scripts/demo.sh

# The demo's base images and wheelhouses, made side by side (cached by their inputs).
demo-fixtures:
	scripts/demo.sh --fixtures

clean:
	rm -rf $(BUILD) build-fuzz
