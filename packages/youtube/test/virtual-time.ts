/**
 * A clock that moves only when the code under test sleeps (or the test advances it): waits are
 * exact and cost no real time. Shared by the pacing tests of `src/` and `test/`.
 */
export function virtualTime(start = 0) {
  let now = start;
  const slept: number[] = [];
  return {
    clock: { now: () => now },
    sleep: async (ms: number) => {
      slept.push(ms);
      now += ms;
    },
    advance: (ms: number) => void (now += ms),
    slept,
  };
}
