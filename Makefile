# tessera: the two commands a new user needs are `make demo` and `make test`.
BUILD   ?= build
JOBS    ?= 2
CMAKE_FLAGS ?=
export GLOG_minloglevel ?= 2
export OMPI_ALLOW_RUN_AS_ROOT ?= 1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM ?= 1
# ccache with the precompiled headers (cmake/TesseraCcache.cmake sets it for the compiler too)
export CCACHE_SLOPPINESS ?= pch_defines,time_macros

.PHONY: all deps configure build test demo bench clean

all: build

deps:
	scripts/install-deps

configure: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

build: configure
	cmake --build $(BUILD) -j$(JOBS)

# Every test, multi-process suites included. ctest -j2 keeps both cores busy; the
# multi-process tests declare how many processors they take. The slowest tests are listed
# at the end; the exit status is ctest's.
test: build
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS) --timeout 600; rc=$$?; \
	  cd $(CURDIR) && scripts/slowest-tests $(BUILD) 15 || true; exit $$rc

demo: build
	scripts/demo $(BUILD)

bench: build
	scripts/bench $(BUILD)

clean:
	rm -rf $(BUILD)
