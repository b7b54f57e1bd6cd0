// How often a crashed server is restarted: at most `maxRestarts` times within `windowMs`,
// then the extension stops trying and says why (a server that dies on start would otherwise
// be restarted forever, with a notification each time).

export interface CloseDecision {
  restart: boolean;
  message: string;
}

export class RestartPolicy {
  private closes: number[] = [];

  constructor(
    readonly maxRestarts = 3,
    readonly windowMs = 3 * 60 * 1000,
  ) {}

  /** The server's connection closed unexpectedly at `now` (ms): restart it or give up? */
  onClosed(now: number = Date.now()): CloseDecision {
    this.closes = this.closes.filter((t) => now - t < this.windowMs);
    this.closes.push(now);
    const n = this.closes.length;
    if (n <= this.maxRestarts) {
      return { restart: true, message: `peerlint: the language server stopped unexpectedly; restarting it (${n} of ${this.maxRestarts}).` };
    }
    const minutes = Math.round(this.windowMs / 60000);
    return {
      restart: false,
      message:
        `peerlint: the language server stopped ${n} times in ${minutes} minutes, so it will not be restarted again. ` +
        "Its log is in the 'peerlint' output channel; fix the cause, then run 'peerlint: Restart server'.",
    };
  }

  /** A deliberate (re)start: forget earlier crashes. */
  reset(): void {
    this.closes = [];
  }
}
