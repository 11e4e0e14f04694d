#!/bin/bash
# Runs the fuzz targets built by fuzz/build.sh (run that first).
#
# Usage: fuzz/run.sh TARGET [SECONDS]   fuzz one target for SECONDS (default 600); new inputs are kept in
#                                       .build/fuzz/corpus/TARGET, crashes in .build/fuzz/artifacts/TARGET
#        fuzz/run.sh --short [SECONDS]  every target: replay fuzz/regressions/TARGET, then fuzz SECONDS
#                                       (default 20) from the seeds, FUZZ_JOBS targets at a time (default 2,
#                                       one per core); fails at the first crash, hang or leak
#
# Each run is bounded: -max_total_time, -timeout (seconds per input) and -rss_limit_mb. libFuzzer's final
# statistics (exec/s, cov, ft) end the output.
set -eu
cd "$(dirname "$0")/.."

BUILD=.build/fuzz
ALL_TARGETS="protocol filter config icy playlists mpddb id3 mp3 xiph flac dsd ffmpeg mpcfaad ogg pcmfiles trackers synth pcmstream c64opl"
# libid3tag (Debian's, as mpd uses it) allocates a compressed ID3v2.3 frame's claimed decompressed size before it
# inflates: up to 4 GiB from a 4-byte field. Linux only reserves such a block (a 4 GiB claim peaks at 60 MB resident
# under ASan), so the per-allocation limit sits above that while -rss_limit_mb still fails memory really used.
LIMITS="-timeout=${FUZZ_TIMEOUT:-10} -rss_limit_mb=${FUZZ_RSS_LIMIT_MB:-2048} -malloc_limit_mb=${FUZZ_MALLOC_LIMIT_MB:-4096}"
# Leaks inside Debian's libraries that Fermata cannot free (fuzz/lsan.supp says which and why).
LSAN_OPTIONS="suppressions=$PWD/fuzz/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export LSAN_OPTIONS

# The bounds of target $1 that differ from $LIMITS, for its fuzzing and its regression replay alike. libsidplayfp's
# cycle-exact C64 emulates every decoded and skipped second too (c64opl's regression input plays three songs of two
# SID chips for about 7 s here, more on a loaded machine): 30 s per input. libgme emulates every second a trackers
# input decodes or seeks past (a short run once met an NSF that took 13 s under load: fuzz/slow/trackers/): 30 s.
target_limits() {
    if [ "$1" = c64opl ]; then echo "-timeout=${FUZZ_C64OPL_TIMEOUT:-30}"; fi
    if [ "$1" = trackers ]; then echo "-timeout=${FUZZ_TRACKERS_TIMEOUT:-30}"; fi
}

# The libFuzzer arguments that fuzz $1 for $2 seconds, in a short or a long run ($3).
fuzz_arguments() {
    case "$1" in
        id3 | mp3) dict=fuzz/dict/mp3.dict max_len=16384 ;;
        flac) dict=fuzz/dict/flac.dict max_len=16384 ;;
        dsd) dict=fuzz/dict/dsd.dict max_len=16384 ;;
        ffmpeg) dict=fuzz/dict/ffmpeg.dict max_len=16384 ;;
        mpcfaad) dict=fuzz/dict/mpcfaad.dict max_len=16384 ;;
        ogg) dict=fuzz/dict/ogg.dict max_len=16384 ;;
        c64opl) dict=fuzz/dict/c64opl.dict max_len=16384 ;;
        *) dict=fuzz/dict/$1.dict max_len=4096 ;;
    esac
    # libgme emulates every sample: on some valid files far slower than real time (fuzz/slow/trackers/ holds a
    # 142-byte NSF that libgme 0.6.3 needs 3.7 s to start and 10 s per second of audio to play, without
    # AddressSanitizer; mpd plays it just as slowly). So long runs fuzz trackers in fork mode and drop an input that
    # takes longer than the timeout instead of failing on it; crashes, leaks and running out of memory still fail.
    # Fork mode is not reproducible (its jobs' seeds and cut-offs follow the clock) and can end with the timeout
    # exit code, so the short run fuzzes trackers in one process from its fixed seed, like every other target.
    slow=""
    if [ "$1" = trackers ] && [ "$3" = long ]; then slow="-fork=1 -ignore_timeouts=1"; fi
    slow="$slow $(target_limits "$1")"
    mkdir -p "$BUILD/corpus/$1" "$BUILD/artifacts/$1"
    echo "-max_total_time=$2 $LIMITS $slow -max_len=$max_len -dict=$dict -print_final_stats=1" \
        "-artifact_prefix=$BUILD/artifacts/$1/ $BUILD/corpus/$1 fuzz/corpus/$1"
}

# Runs `$BUILD/bin/$1` with the remaining arguments, its output in a log; on failure shows the log's end.
run_logged() {
    target=$1
    shift
    log="$BUILD/logs/$target.log"
    mkdir -p "$BUILD/logs"
    if "$BUILD/bin/$target" "$@" >"$log" 2>&1; then
        grep -E '^(stat::number_of_executed_units|stat::average_exec_per_sec|Done |#[0-9]+[[:space:]]+DONE|INFO: exiting)' "$log" || true
    else
        tail -n 60 "$log"
        echo "fuzz target $target failed (full log: $log)" >&2
        exit 1
    fi
}

# The short run (`make fuzz-short`, part of `make test`) is a reproducible smoke test: every target from the same
# seed (FUZZ_SEED, default 1), so a clean clone explores the same inputs each time; FUZZ_SHORT_TARGETS limits it to
# some targets. Exploring is the long runs' job (`make fuzz TARGET=…`: a new seed each run).
seed=""
if [ "${1:-}" = "--short" ]; then
    targets=${FUZZ_SHORT_TARGETS:-$ALL_TARGETS}
    seconds=${2:-20}
    seed="-seed=${FUZZ_SEED:-1}"
else
    targets=${1:?usage: fuzz/run.sh TARGET [SECONDS] | --short [SECONDS]}
    seconds=${2:-600}
fi
for target in $targets; do
    [ -x "$BUILD/bin/$target" ] || { echo "no $BUILD/bin/$target: run fuzz/build.sh (make fuzz-build)" >&2; exit 1; }
done

# One target's short run: its regressions replayed, then fuzzed from the seed (a job of its own).
short_run() {
    target=$1
    set -- fuzz/regressions/"$target"/*
    if [ -e "$1" ]; then
        echo "== $target: replaying $# regression input(s)"
        # shellcheck disable=SC2046,SC2086  # $LIMITS and the target's limits are lists of options
        run_logged "$target" $LIMITS $(target_limits "$target") "$@"
    fi
    echo "== $target: fuzzing for $seconds s"
    # shellcheck disable=SC2046,SC2086  # the arguments are a list
    run_logged "$target" $seed $(fuzz_arguments "$target" "$seconds" short)
}

if [ "${1:-}" = "--short" ]; then
    # Each target runs in one process, so FUZZ_JOBS of them at once use the cores a single one leaves idle; the
    # first failure stops new jobs, and the running ones finish.
    jobs_max=${FUZZ_JOBS:-2}
    running=0
    failed=0
    for target in $targets; do
        short_run "$target" &
        running=$((running + 1))
        if [ "$running" -ge "$jobs_max" ]; then
            wait -n || failed=1
            running=$((running - 1))
            [ "$failed" = 0 ] || break
        fi
    done
    while [ "$running" -gt 0 ]; do
        wait -n || failed=1
        running=$((running - 1))
    done
    if [ "$failed" != 0 ]; then
        echo "fuzz-short failed (the first failing target's log is above)" >&2
        exit 1
    fi
else
    # shellcheck disable=SC2046  # the arguments are a list
    exec "$BUILD/bin/$targets" $(fuzz_arguments "$targets" "$seconds" long)
fi
