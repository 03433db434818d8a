/**
 * A bounded wait, as shutdowns use them (a drain, a grace time): whether
 * `promise` settles within `ms` (0 or less: not waited for); the timer does
 * not outlive the wait.
 */
export function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  if (ms <= 0) return Promise.resolve(false);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  return Promise.race([promise.then(() => true), late]).finally(() => clearTimeout(timer));
}
