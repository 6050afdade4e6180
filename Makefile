# tessera: the two commands a new user needs are `make demo` and `make test`.
BUILD   ?= build
JOBS    ?= 2
CMAKE_FLAGS ?=
export GLOG_minloglevel ?= 2
export OMPI_ALLOW_RUN_AS_ROOT ?= 1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM ?= 1
# ccache with the precompiled headers (cmake/TesseraCcache.cmake sets it for the compiler too)
export CCACHE_SLOPPINESS ?= pch_defines,time_macros

.PHONY: all deps configure build test test-minimal demo bench clean fuzz sanitize

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

# The sla library and its tests with every optional sparse backend switched off
# (cmake/TesseraSlaBackends.cmake): they report NotCompiled and auto dispatch uses the native
# Krylov methods. Not part of `make test`; a fresh build of three libraries and one test program.
MINIMAL_BUILD ?= build-minimal
MINIMAL_FLAGS = -DTESSERA_WITH_EIGEN=OFF -DTESSERA_WITH_CHOLMOD=OFF -DTESSERA_WITH_UMFPACK=OFF \
                -DTESSERA_WITH_SUPERLU=OFF -DTESSERA_WITH_HYPRE=OFF -DTESSERA_WITH_MUMPS=OFF
test-minimal:
	cmake -S . -B $(MINIMAL_BUILD) -DCMAKE_BUILD_TYPE=Release $(MINIMAL_FLAGS)
	cmake --build $(MINIMAL_BUILD) -j$(JOBS) --target tessera_sla_tests
	cd $(MINIMAL_BUILD) && ctest --output-on-failure -j$(JOBS) -L sla -LE 'mpi|cli'

demo: build
	scripts/demo $(BUILD)

bench: build
	scripts/bench $(BUILD)

# libFuzzer targets (fuzz/) built with clang, ASan and UBSan in build-fuzz, each run for
# FUZZ_SECONDS (default 60); they link the normal build's libraries for what they do not fuzz.
FUZZ_BUILD   ?= build-fuzz
FUZZ_SECONDS ?= 60
fuzz: configure
	cmake --build $(BUILD) -j$(JOBS) --target tessera_lirpa tessera_sla
	cmake -S fuzz -B $(FUZZ_BUILD) -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang -DTESSERA_BUILD_DIR=$(CURDIR)/$(BUILD)
	cmake --build $(FUZZ_BUILD) -j$(JOBS)
	FUZZ_SECONDS=$(FUZZ_SECONDS) fuzz/run.sh $(FUZZ_BUILD)

# The unit tests (the gtest suites of every layer and of the command line) under gcc's
# AddressSanitizer and UndefinedBehaviorSanitizer, built in SANITIZE_BUILD at -O1 with
# assertions on, run by ctest one process per test (tests/sanitize/run.sh). Leaks are
# detected; tests/sanitize/*.supp suppress third-party findings only. Then the core's tests
# (the memory ledger, threads, the watchdog) under ThreadSanitizer in TSAN_BUILD, OpenMP
# through LLVM's libomp and Archer (tests/sanitize/run_tsan.sh).
SANITIZE_BUILD ?= build-sanitize
TSAN_BUILD     ?= build-tsan
SANITIZE_FLAGS ?= -fsanitize=address,undefined -fno-omit-frame-pointer
SANITIZE_TESTS := tessera_core_tests tessera_dist_tests tessera_sla_tests tessera_lirpa_tests tessera_apps_tests
sanitizer_cmake = cmake -S . -B $(1) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g" \
	  -DCMAKE_CXX_FLAGS="$(2)" -DCMAKE_C_FLAGS="$(2)" \
	  -DCMAKE_EXE_LINKER_FLAGS="$(2)" -DCMAKE_SHARED_LINKER_FLAGS="$(2)" $(CMAKE_FLAGS)
sanitize: deps
	$(call sanitizer_cmake,$(SANITIZE_BUILD),$(SANITIZE_FLAGS))
	LSAN_OPTIONS=suppressions=$(CURDIR)/tests/sanitize/lsan.supp \
	  cmake --build $(SANITIZE_BUILD) -j$(JOBS) --target $(SANITIZE_TESTS)
	tests/sanitize/run.sh $(SANITIZE_BUILD)
	$(call sanitizer_cmake,$(TSAN_BUILD),-fsanitize=thread)
	TSAN_OPTIONS=report_bugs=0 cmake --build $(TSAN_BUILD) -j$(JOBS) --target tessera_core_tests
	tests/sanitize/run_tsan.sh $(TSAN_BUILD)

clean:
	rm -rf $(BUILD)
