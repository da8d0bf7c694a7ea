// A job's abort handle. Creating an AbortSignal costs more than a no-op job
// itself, and only a hard shutdown aborts; so the controller is made only when
// a handler reads ctx.signal or the job is aborted.
export class LazyAbort {
  private controller?: AbortController;

  get signal(): AbortSignal {
    return (this.controller ??= new AbortController()).signal;
  }

  get aborted(): boolean {
    return this.controller?.signal.aborted ?? false;
  }

  abort(reason?: unknown): void {
    (this.controller ??= new AbortController()).abort(reason);
  }
}
