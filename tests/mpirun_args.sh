# Sourced by the comparison scripts, whose arguments are `TESSERA MPIRUN... -- REST...`:
# sets `tessera` and the array `mpirun`, and leaves REST as the positional parameters.
# One thread per process everywhere, so that the single run splits nothing differently.
tessera=$1; shift
mpirun=()
while [ "$1" != "--" ]; do mpirun+=("$1"); shift; done
shift
export TESSERA_THREADS=1
