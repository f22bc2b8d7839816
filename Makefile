# Thin wrapper over CMake/ctest. `make test` is the whole suite (.ci/run calls it).
BUILD ?= build
JOBS ?= $(shell nproc)
TEST_PY ?= 3.11
TEST_PADDLE ?= paddlepaddle==3.2.0
export IMGTOOL_TEST_BASE ?= imgtool-base/debian:bookworm-py3

.PHONY: all deps build fixtures test unit demo bench clean

all: build

deps:
	scripts/install-deps.sh

build:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build $(BUILD) -j $(JOBS)

# Local base image + wheelhouse (cached under ~/.cache/imgtool).
fixtures:
	scripts/make-base.sh $(IMGTOOL_TEST_BASE) >/dev/null
	scripts/wheelhouse.sh $(TEST_PY) $(TEST_PADDLE) >/dev/null

test: deps build fixtures
	IMGTOOL_TEST_WHEELHOUSE=$$(scripts/wheelhouse.sh $(TEST_PY) $(TEST_PADDLE)) \
	  ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS) --timeout 1200

unit: build
	ctest --test-dir $(BUILD) --output-on-failure -L unit -j $(JOBS)

# The main job on the embedded default: build + smoke + sign + publish a small
# matrix into a loopback registry and an OCI layout that it starts/creates itself.
demo: deps build fixtures
	scripts/demo.sh

clean:
	rm -rf $(BUILD)
