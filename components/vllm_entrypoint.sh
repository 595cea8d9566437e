# vLLM start-up: size tensor parallelism to the devices this container was given.
#
# Run as:  sh -c "<this script>" vllm-entrypoint <gpu|tpu> <vLLM server arguments...>
#
# The DRA claim decides at scheduling time which alternative a pod gets (one
# A100 80GB, two A100 40GB, ...), so the tensor-parallel size is only known
# here: count the devices, then exec the OpenAI-compatible server with
# --tensor-parallel-size=<count> followed by the server arguments unchanged.
#   gpu: the "GPU <n>:" lines of `nvidia-smi -L` (MIG slices are listed
#        indented under their GPU, so a container with one slice counts 1).
#   tpu: the chips the TPU DRA driver injected: /dev/accel<n>, or the
#        numbered VFIO groups /dev/vfio/<n> on v5e/v5p/v6e.
# DEVICE_ROOT (unset in pods) relocates /dev for tests.
set -eu

if [ "$#" -lt 1 ]; then
  echo "vllm-entrypoint: usage: vllm-entrypoint <gpu|tpu> <server args...>" >&2
  exit 2
fi
family="$1"
shift

count_gpus() {
  if ! listing="$(nvidia-smi -L)"; then
    echo "vllm-entrypoint: nvidia-smi -L failed; is a GPU allocated to this container?" >&2
    exit 1
  fi
  printf '%s\n' "$listing" | grep -c '^GPU [0-9]' || true
}

count_tpus() {
  root="${DEVICE_ROOT:-}"
  n=0
  for dev in "$root"/dev/accel[0-9]*; do
    if [ -e "$dev" ]; then n=$((n + 1)); fi
  done
  if [ "$n" -eq 0 ]; then
    for dev in "$root"/dev/vfio/[0-9]*; do
      if [ -e "$dev" ]; then n=$((n + 1)); fi
    done
  fi
  echo "$n"
}

case "$family" in
  gpu) count="$(count_gpus)" ;;
  tpu) count="$(count_tpus)" ;;
  *)
    echo "vllm-entrypoint: unknown accelerator family '$family' (expected gpu or tpu)" >&2
    exit 2
    ;;
esac

case "$count" in
  '' | *[!0-9]*) count=0 ;;
esac
if [ "$count" -lt 1 ]; then
  echo "vllm-entrypoint: no $family device is allocated to this container; check its ResourceClaim" >&2
  exit 1
fi

echo "vllm-entrypoint: $count $family device(s) allocated, starting vLLM with --tensor-parallel-size=$count" >&2
exec python3 -m vllm.entrypoints.openai.api_server --tensor-parallel-size="$count" "$@"
