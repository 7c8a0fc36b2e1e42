# The soak's shell run (bash, for EPOCHREALTIME and /dev/tcp: no fork to read the clock or to
# connect). It leaves engine-side marks of its own life in the marks file (soak/marks.mjs):
#   S <pid> <correlationId> <scheduler> <scheduledFor> <start µs>        first thing it does
#   E <pid> <correlationId> <scheduler> <scheduledFor> <end µs> exit|term  on exit or on SIGTERM
# A SIGKILLed run writes no E line. For those, it holds a connection to the soak's witness
# (soak/witness.mjs) open for as long as it or its sleep child lives; the witness notes when it
# closed, which is when the last process of the run was gone (an upper bound).
# Usage: bash mark.sh MARKS PORT MIN_MS MAX_MS EXIT_CODE SEED; sleeps MIN_MS..MAX_MS (seeded by
# SEED, the scheduler and the occurrence), then exits EXIT_CODE.
t0=${EPOCHREALTIME/./}
marks=$1
id="$$ $URSA_CORRELATION_ID $URSA_SCHEDULER $URSA_SCHEDULED_FOR"
child=
mark() {
  printf 'E %s %s %s\n' "$id" "${EPOCHREALTIME/./}" "$1" >>"$marks"
}
trap 'mark term; [ -n "$child" ] && kill "$child" 2>/dev/null; exit 143' TERM
{ exec 3<>"/dev/tcp/127.0.0.1/$2"; } 2>/dev/null
printf 'S %s %s\n' "$id" "$t0" >>"$marks"
printf '%s\n' "$id" >&3 2>/dev/null
digits=${URSA_SCHEDULED_FOR//[^0-9]/}
d=${digits:(-9)}
n=${URSA_SCHEDULER//[^0-9]/}
# 10#: leading zeros are not octal.
RANDOM=$((($6 + 10#${d:-0} * 31 + 10#${n:-0}) % 2147483647))
ms=$(($3 + (RANDOM * 32768 + RANDOM) % ($4 - $3 + 1)))
if [ "$ms" -gt 0 ]; then
  printf -v frac '%03d' $((ms % 1000))
  sleep "$((ms / 1000)).$frac" &
  child=$!
  wait "$child"
  child=
fi
mark exit
exit "$5"
