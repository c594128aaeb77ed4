# The two commands a newcomer runs: `make demo` and `make test`.
# Both install the Debian packages strata needs when they are missing,
# configure with CMake, build, then run.
BUILD      ?= build
SAN_BUILD  ?= build-sanitize
CLANG_BUILD ?= build-clang
TSAN_BUILD ?= build-tsan
FUZZ_SECONDS ?= 60
JOBS       ?= $(shell nproc)
# ccache keys on paths relative to the checkout, so every clone shares its cache;
# without NOHASHDIR the builds with debug info (test-sanitize, test-tsan, fuzz)
# would also key on the build folder's absolute path and miss in every new clone.
export CCACHE_BASEDIR ?= $(CURDIR)
export CCACHE_NOHASHDIR ?= 1
# Depend mode: on a miss ccache takes the headers from the compiler's -MD file instead of
# running the preprocessor first (half a second per test object; a cold CI compiles 500).
export CCACHE_DEPEND ?= 1
# dataset-fashion-mnist: the images examples/fashion_mnist_cnn.cpp trains on (its --small run
# is a test) and the fashion_cnn_train_step bench row reads, in /usr/share/datasets/fashion-mnist.
APT_PACKAGES := cmake g++ make libeigen3-dev catch2 nlohmann-json3-dev ccache libsleef-dev libdnnl-dev libopenblas0-pthread wamerican \
                doxygen libopenmpi-dev openmpi-bin zlib1g-dev ninja-build dataset-fashion-mnist
CMAKE_FLAGS ?=
# Ninja for a new build folder (as bench/gpu_check.sh uses; its no-op and incremental builds
# start faster than Make's). A folder already configured keeps its generator.
generator = $(if $(wildcard $(1)/CMakeCache.txt),,-G Ninja)

# Peers only `make bench` needs (never `make test`): the BLAS libraries and PyTorch.
BENCH_PACKAGES := libopenblas-dev libblis-dev python3-torch

# What `make gradbench` (and its smoke test in `make test`, skipped without them) needs to run
# GradBench's evals and its pytorch tool: Debian's Python modules, never pip.
GRADBENCH_PACKAGES := python3-numpy python3-scipy python3-pydantic python3-dataclasses-json python3-torch
# A GradBench checkout (github.com/gradbench/gradbench), used read-only.
GRADBENCH ?= ../shared/reference/gradbench
# Which inputs `make gradbench` runs: medium (every eval, in well under an hour on two cores),
# full (each eval's own defaults) or smoke (hello, one gmm and one lse input).
GRADBENCH_PRESET ?= medium
GRADBENCH_TOOLS ?= strata manual pytorch finite

# What the clang builds (test-clang, test-tsan, fuzz) need besides APT_PACKAGES:
# Debian 12's clang 14 and its runtimes (ASan, UBSan, TSan, libFuzzer).
CLANG_PACKAGES := clang libclang-rt-14-dev

.PHONY: all deps bench-deps gradbench gradbench-deps clang-deps build build-bench test test-bench docs demo demo-dist bench-dist bench bench-avx2 bench-loaded test-sanitize test-clang \
        test-tsan fuzz format clean gpu-deps

all: build

# Installs whatever of APT_PACKAGES is missing (as root, or through sudo).
deps:
	@missing=""; \
	for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "strata: installing Debian packages:$$missing"; \
	  if [ "$$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi; \
	  $$sudo apt-get update -q && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -q $$missing; \
	fi

gradbench-deps:
	@$(MAKE) --no-print-directory deps APT_PACKAGES="$(GRADBENCH_PACKAGES)"

bench-deps:
	@$(MAKE) --no-print-directory deps APT_PACKAGES="$(BENCH_PACKAGES)"

clang-deps: deps
	@$(MAKE) --no-print-directory deps APT_PACKAGES="$(CLANG_PACKAGES)"

build: deps
	cmake -S . -B $(BUILD) $(call generator,$(BUILD)) -DCMAKE_BUILD_TYPE=Release -DSTRATA_BUILD_TESTS=ON \
	  -DSTRATA_BUILD_EXAMPLES=ON -DSTRATA_BUILD_BENCH=ON $(CMAKE_FLAGS)
	cmake --build $(BUILD) -j$(JOBS)

# Every test but the benchmark programs' (label bench: make test-bench).
test: build
	cd $(BUILD) && ctest --output-on-failure --no-tests=error -j$(JOBS) -LE bench

# The benchmark programs (strata_bench, the GradBench tool, the data-parallel row) are left
# out of `make build`, which keeps make test's cold build short; these build and test them.
build-bench: build
	cmake --build $(BUILD) -j$(JOBS) --target strata_benchmarks

# The benchmark programs' own tests: strata_bench's --print-isa and --merge, and GradBench's
# smoke run (hello, one gmm and one lse input, validated by the evals; skipped without a
# GradBench checkout or its Python modules).
test-bench: build-bench
	cd $(BUILD) && ctest --output-on-failure --no-tests=error -j$(JOBS) -L bench

# The API reference, from the installed headers, into $(BUILD)/docs/html
# (fails on any undocumented public symbol; ctest runs the same check).
docs: build
	docs/api/build.sh $(BUILD)

# The flagship sequence: train a classifier (progress bar, checkpoint, loss
# curve under $(BUILD)/demo), then Newton's method with exact Hessians.
demo: build
	./$(BUILD)/examples/train_mlp --out $(BUILD)/demo
	./$(BUILD)/examples/newton_rosenbrock
	@echo
	@echo "strata demo: the loss curve is $(abspath $(BUILD))/demo/loss_curve.svg and the"
	@echo "checkpoint $(abspath $(BUILD))/demo/mlp_moons.safetensors"

# Data-parallel training on 2 processes (examples/ddp_train.cpp, docs/DISTRIBUTED.md): it
# ends by checking that the final parameters equal a one-process run on the same global
# batches. The variables let OpenMPI run as root (CI does), put more ranks than cores and
# leave each rank's threads unpinned; MPI_NP changes the number of ranks.
MPI_NP ?= 2
MPI_ENV := OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
           OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_hwloc_base_binding_policy=none
demo-dist: build
	@test -x $(BUILD)/examples/ddp_train || \
	  { echo "strata: the dist layer was not built (no MPI found: make deps installs it)"; exit 1; }
	$(MPI_ENV) mpirun -np $(MPI_NP) ./$(BUILD)/examples/ddp_train

# The data-parallel benchmark row ddp_mlp_step_<MPI_NP>ranks (bench/ddp_bench.cpp): step
# time, all-reduce time, the share of it hidden behind the backward pass, and one process
# on the whole global batch for scaling. Each rank gets the cores divided by the ranks as
# threads (DIST_THREADS): on 16 cores, make bench-dist MPI_NP=4 runs 4 ranks x 4 threads.
# JSON in $(BUILD)/bench/results_dist.json.
DIST_THREADS ?= $(shell n=$$(( $(JOBS) / $(MPI_NP) )); [ $$n -ge 1 ] && echo $$n || echo 1)
bench-dist: build-bench
	@test -x $(BUILD)/bench/strata_bench_ddp || \
	  { echo "strata: the dist layer was not built (no MPI found: make deps installs it)"; exit 1; }
	$(MPI_ENV) STRATA_NUM_THREADS=$(DIST_THREADS) mpirun -np $(MPI_NP) \
	  ./$(BUILD)/bench/strata_bench_ddp --out $(BUILD)/bench/results_dist.json

# strata's workloads, the machine's limits and the peers (Eigen, OpenBLAS,
# BLIS, PyTorch), interleaved, with the instruction set the CPU allows and, on
# an AVX-512 CPU, again restricted to AVX2 (bench-avx2): one table per
# instruction set on stdout; each run's JSON in build/bench/results_native.json
# and results_avx2.json, both merged into build/bench/results.json. An
# OPENBLAS_CORETYPE inherited from the shell is dropped (strata_bench picks
# OpenBLAS's best kernels for the CPU); run the binary directly to keep it.
bench: bench-deps build-bench
	@rm -f $(BUILD)/bench/results_avx2.json
	env -u OPENBLAS_CORETYPE ./$(BUILD)/bench/strata_bench --out $(BUILD)/bench/results_native.json
	@if [ "$$(./$(BUILD)/bench/strata_bench --print-isa)" = avx512 ]; then \
	  echo; $(MAKE) --no-print-directory bench-avx2; fi
	@./$(BUILD)/bench/strata_bench --merge $(BUILD)/bench/results.json \
	  $(BUILD)/bench/results_native.json \
	  $$(ls $(BUILD)/bench/results_avx2.json 2>/dev/null)

# strata against GradBench's evals, with GradBench's manual (hand-written C++) and pytorch tools
# as peers in the same run, one thread each (bench/gradbench/README.md): the table on stdout,
# every evaluation in $(BUILD)/bench/gradbench.json, the message logs in $(BUILD)/bench/gradbench/.
gradbench: gradbench-deps build-bench
	/usr/bin/python3 bench/gradbench/driver.py --gradbench $(GRADBENCH) \
	  --strata-bin $(BUILD)/bench/gradbench/strata_gradbench --out $(BUILD)/bench \
	  --preset $(GRADBENCH_PRESET) --tools $(GRADBENCH_TOOLS)

# The table under a competing load, as on a shared machine: strata_bench --load keeps one
# thread spinning on the last CPU while every row runs (strata and the peers alike; the
# limits are measured before it starts). JSON in build/bench/results_loaded.json; compare
# each row's ratio to the peers with a quiet `make bench`'s.
bench-loaded: bench-deps build-bench
	./$(BUILD)/bench/strata_bench --load --out $(BUILD)/bench/results_loaded.json

# The same run with strata and every peer restricted to AVX2, so the AVX2 paths
# are measured on an AVX-512 machine too: JSON in build/bench/results_avx2.json.
bench-avx2: bench-deps build-bench
	cmake --build $(BUILD) -j$(JOBS) --target strata_bench_eigen_avx2
	STRATA_ISA=avx2 DNNL_MAX_CPU_ISA=AVX2 OPENBLAS_CORETYPE=Haswell ATEN_CPU_CAPABILITY=avx2 \
	  ./$(BUILD)/bench/strata_bench --out $(BUILD)/bench/results_avx2.json

# The sanitizer builds (test-sanitize, test-tsan, fuzz) at -O1 with line tables only:
# a fifth less compile time than RelWithDebInfo's -O2 -g, and the reports still name
# file and line.
SAN_BUILD_TYPE := -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only -DNDEBUG"
space := $(subst ,, )

# The whole test suite again, built with clang 14, AddressSanitizer and UBSan
# (and without CUDA, so CI also checks the CPU-only build). With `make test`
# (gcc 12) it is how CI builds and runs everything with both compilers. Not run
# here: raw_host_copies (the raw suite a second time, each naive read through a
# host copy: the same library code as `raw`, and the longest test under ASan)
# and the install test.
SAN_CONFIGURE = CC=clang CXX=clang++ cmake -S . -B $(SAN_BUILD) $(call generator,$(SAN_BUILD)) $(SAN_BUILD_TYPE) -DSTRATA_SANITIZE=ON \
  -DSTRATA_FUZZ=ON -DSTRATA_CUDA=OFF -DSTRATA_BUILD_TESTS=ON -DSTRATA_BUILD_EXAMPLES=ON \
  -DSTRATA_BUILD_BENCH=OFF $(CMAKE_FLAGS)
test-sanitize: clang-deps
	$(SAN_CONFIGURE)
	cmake --build $(SAN_BUILD) -j$(JOBS)
	cd $(SAN_BUILD) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --output-on-failure --no-tests=error -j$(JOBS) -LE install -E '^raw_host_copies$$'

# The whole test suite built with clang instead of gcc (CPU only, no bench).
test-clang: clang-deps
	CC=clang CXX=clang++ cmake -S . -B $(CLANG_BUILD) $(call generator,$(CLANG_BUILD)) -DCMAKE_BUILD_TYPE=Release -DSTRATA_CUDA=OFF \
	  -DSTRATA_BUILD_TESTS=ON -DSTRATA_BUILD_EXAMPLES=ON -DSTRATA_BUILD_BENCH=OFF $(CMAKE_FLAGS)
	cmake --build $(CLANG_BUILD) -j$(JOBS)
	cd $(CLANG_BUILD) && CC=clang CXX=clang++ ctest --output-on-failure --no-tests=error -j$(JOBS)

# ThreadSanitizer (clang): every layer's test cases tagged [threads], those that run
# code on several threads on purpose (tests/CMakeLists.txt): the thread pool, the
# threaded kernels at every thread count, tapes recorded on several threads, the
# parallel stress test, jitted functions called and traced on several threads.
# Reports in third-party runtimes are suppressed by tests/tsan.supp (each entry says
# why); strata's own code has none.
TSAN_SUITES := core raw diff ad nn jit
test-tsan: clang-deps
	CC=clang CXX=clang++ cmake -S . -B $(TSAN_BUILD) $(call generator,$(TSAN_BUILD)) $(SAN_BUILD_TYPE) -DSTRATA_TSAN=ON \
	  -DSTRATA_CUDA=OFF -DSTRATA_MPI=OFF -DSTRATA_BUILD_TESTS=ON -DSTRATA_BUILD_EXAMPLES=OFF \
	  -DSTRATA_BUILD_BENCH=OFF $(CMAKE_FLAGS)
	cmake --build $(TSAN_BUILD) -j$(JOBS) --target $(TSAN_SUITES:%=strata_%_tests)
	cd $(TSAN_BUILD) && TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 \
	  suppressions=$(abspath tests/tsan.supp)" ctest --output-on-failure --no-tests=error -j$(JOBS) \
	  -R '^($(subst $(space),|,$(TSAN_SUITES)))$$'

# libFuzzer (clang, ASan + UBSan) on the checkpoint loader, its metadata reader,
# a tensor's JSON form and the IDX loader, FUZZ_SECONDS each. The targets are part of the ASan + UBSan
# build (after make test-sanitize, only they are left to build); the build writes the
# seed corpus with strata's own save functions; crashes land in $(SAN_BUILD)/tests/fuzz/.
FUZZ_TARGETS := load_safetensors load_safetensors_metadata tensor_from_json load_idx
fuzz: clang-deps
	$(SAN_CONFIGURE)
	cmake --build $(SAN_BUILD) -j$(JOBS) --target strata_fuzz_corpus $(FUZZ_TARGETS:%=fuzz_%)
	cd $(SAN_BUILD)/tests/fuzz && failed=""; \
	for t in $(FUZZ_TARGETS); do \
	  echo "strata: fuzzing $$t for $(FUZZ_SECONDS) s"; \
	  mkdir -p corpus/$$t.found; \
	  ./fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -timeout=10 -print_final_stats=1 \
	    corpus/$$t.found corpus/$$t || failed="$$failed $$t"; \
	done; \
	if [ -n "$$failed" ]; then echo "strata: fuzzing found a crash in:$$failed"; exit 1; fi

# What a bare GPU image lacks (Eigen, Catch2, nlohmann-json, SLEEF, the word
# list), downloaded as .deb files and unpacked into .gpu-deps/prefix for
# bench/gpu_check.sh (docs/CUDA.md). Needs network, not root.
gpu-deps:
	bench/gpu_deps.sh

format:
	clang-format -i $$(git ls-files '*.hpp' '*.cpp')

clean:
	rm -rf $(BUILD) $(SAN_BUILD) $(CLANG_BUILD) $(TSAN_BUILD)
