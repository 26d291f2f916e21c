# The README's two commands: `make demo` and `make test`. Each sets everything up (system and
# Python packages, build, install) and is fast when nothing changed.
PYTHON ?= python3
BUILD_DIR ?= build
PREFIX ?= /usr/local
JOBS ?= $(shell nproc)
GENERATOR := $(shell command -v ninja >/dev/null 2>&1 && echo Ninja || echo "Unix Makefiles")
# ccache (installed by `make deps`) makes rebuilds in other checkouts of the tree and the
# packaging test's second build of the project (tests/integration/packaging) cheap. Paths are
# hashed relative to the checkout, so build directories side by side share the cache.
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := 1
export OMPI_ALLOW_RUN_AS_ROOT := 1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM := 1

# What `make demo` builds and installs: the library, the launcher (and its network check), the
# C example and the Python extension; `make build`/`make test` build every target, tests included.
DEMO_TARGETS := runrun runrun-check-network runrun_example_allreduce runrun_python_core

.PHONY: all deps deps-demo configure configure-tree build install install-python demo test \
	test-cpp test-python clean

all: build

deps:
	@bash scripts/install_deps.sh all

deps-demo:
	@bash scripts/install_deps.sh demo

configure: deps
	@$(MAKE) --no-print-directory configure-tree

configure-tree:
	@if [ ! -f $(BUILD_DIR)/CMakeCache.txt ]; then \
	  launcher=$$(command -v ccache >/dev/null 2>&1 && echo -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
	    -DCMAKE_C_COMPILER_LAUNCHER=ccache); \
	  cmake -S . -B $(BUILD_DIR) -G "$(GENERATOR)" -DCMAKE_INSTALL_PREFIX=$(PREFIX) $$launcher \
	    -DPython3_EXECUTABLE="$$(command -v $(PYTHON))" -DRUNRUN_WERROR=ON; fi

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

install: build
	cmake --install $(BUILD_DIR) > /dev/null
	@bash scripts/install_python.sh "$(PYTHON)" "$(BUILD_DIR)"

demo: deps-demo
	@$(MAKE) --no-print-directory configure-tree
	cmake --build $(BUILD_DIR) -j $(JOBS) --target $(DEMO_TARGETS)
	cmake --install $(BUILD_DIR) > /dev/null
	@bash scripts/install_python.sh "$(PYTHON)" "$(BUILD_DIR)"
	bash scripts/demo.sh

test: install
	bash scripts/run_tests.sh "$(BUILD_DIR)"

clean:
	rm -rf $(BUILD_DIR)
