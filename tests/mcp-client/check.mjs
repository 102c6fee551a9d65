// What every client script here prints, in one place: "ok WHAT" per check passed; on the
// first one failed "FAIL WHAT: DETAIL" on stderr and exit 1; "FAIL timed out" when the whole
// script runs past its deadline. LABEL (a mode, an era) prefixes each line as "[LABEL]".

// A check function for LABEL (none: no prefix); MAX cuts a long detail to that many characters.
export function checker(label, max = Infinity) {
  const p = label === undefined ? "" : `[${label}] `;
  return (cond, what, detail) => {
    if (!cond) {
      console.error(`FAIL ${p}${what}${detail === undefined ? "" : `: ${JSON.stringify(detail).slice(0, max)}`}`);
      process.exit(1);
    }
    console.log(`ok ${p}${what}`);
  };
}

// Ends the script as failed after MS milliseconds, unless it ended first.
export function deadline(ms, label) {
  setTimeout(() => {
    console.error(`FAIL ${label === undefined ? "" : `[${label}] `}timed out`);
    process.exit(1);
  }, ms).unref();
}

// The environment a client gives the `rtn serve` it starts: its own, without the malloc
// tunables the suite may give node alone (serve_e2e.sh: node's reading of results of many
// MiB churns memory otherwise), so the server under test runs as a user's would.
export function serverEnv() {
  const env = { ...process.env };
  delete env.GLIBC_TUNABLES;
  return env;
}
