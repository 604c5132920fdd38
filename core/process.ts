/** Facts about other processes on this machine. */

/** True while process `pid` exists, ours or another user's (EPERM: it exists but is not ours to signal). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
