# The two commands a newcomer runs: `make demo` and `make test`.
# Both install the Debian packages strata needs when they are missing,
# configure with CMake, build, then run.
BUILD      ?= build
SAN_BUILD  ?= build-sanitize
JOBS       ?= $(shell nproc)
APT_PACKAGES := cmake g++ make libeigen3-dev catch2 nlohmann-json3-dev ccache libsleef-dev libdnnl-dev wamerican \
                doxygen
CMAKE_FLAGS ?=

# Peers only `make bench` needs (never `make test`): the BLAS libraries and PyTorch.
BENCH_PACKAGES := libopenblas-dev libblis-dev python3-torch

.PHONY: all deps bench-deps build test docs demo bench test-sanitize format clean

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

bench-deps:
	@$(MAKE) --no-print-directory deps APT_PACKAGES="$(BENCH_PACKAGES)"

build: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DSTRATA_BUILD_TESTS=ON \
	  -DSTRATA_BUILD_EXAMPLES=ON -DSTRATA_BUILD_BENCH=ON $(CMAKE_FLAGS)
	cmake --build $(BUILD) -j$(JOBS)

test: build
	cd $(BUILD) && ctest --output-on-failure --no-tests=error -j$(JOBS)

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

# strata's workloads, the machine's limits and the peers (Eigen, OpenBLAS,
# BLIS, PyTorch) in one run: one table on stdout, JSON in build/bench/results.json.
bench: bench-deps build
	./$(BUILD)/bench/strata_bench --out $(BUILD)/bench/results.json

# The whole test suite again, built with AddressSanitizer and UBSan (and
# without CUDA, so CI also checks the CPU-only build).
test-sanitize: deps
	cmake -S . -B $(SAN_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTRATA_SANITIZE=ON -DSTRATA_CUDA=OFF \
	  -DSTRATA_BUILD_TESTS=ON -DSTRATA_BUILD_EXAMPLES=ON -DSTRATA_BUILD_BENCH=OFF $(CMAKE_FLAGS)
	cmake --build $(SAN_BUILD) -j$(JOBS)
	cd $(SAN_BUILD) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --output-on-failure --no-tests=error -j$(JOBS) -LE install

format:
	clang-format -i $$(git ls-files '*.hpp' '*.cpp')

clean:
	rm -rf $(BUILD) $(SAN_BUILD)
