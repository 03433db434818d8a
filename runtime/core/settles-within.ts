/**
 * A bounded wait, as shutdowns use them (a drain, a grace time): whether
 * `promise` settles within `ms` (0 or less: not waited for), rejected
 * counting as settled: this never rejects, so a shutdown's next step (cutting
 * connections) always comes; the caller awaits `promise` itself for its
 * failure. The timer does not outlive the wait.
 */
export function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  if (ms <= 0) return Promise.resolve(false);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  const settled = promise.then(
    () => true,
    () => true,
  );
  return Promise.race([settled, late]).finally(() => clearTimeout(timer));
}
