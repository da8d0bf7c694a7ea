// The first `k` of a stream in a total order, without keeping the stream: a
// page of Busy is the `offset + count` oldest of 20,000 running jobs, and
// keeping all of them alive to sort them made every young-generation
// collection copy them. A max-heap of `k` holds what may still be on the page;
// its top is the last of them, so most entries are turned away by one
// comparison and never built (`last`).

export class Smallest<T> {
  private readonly heap: T[] = [];

  constructor(
    private readonly k: number,
    private readonly compare: (a: T, b: T) => number,
  ) {}

  /**
   * The last of the `k` kept, once `k` are kept (undefined before): an entry
   * ranked after it cannot enter, so a caller can turn it away before
   * building it.
   */
  get last(): T | undefined {
    return this.heap.length === this.k ? this.heap[0] : undefined;
  }

  /** Keeps `item` if it is among the first `k` so far. */
  offer(item: T): void {
    const h = this.heap;
    if (h.length < this.k) {
      h.push(item);
      this.up(h.length - 1);
    } else if (this.k > 0 && this.compare(item, h[0]!) < 0) {
      h[0] = item;
      this.down(0);
    }
  }

  /** What was kept, in order. */
  sorted(): T[] {
    return [...this.heap].sort(this.compare);
  }
  private up(i: number): void {
    const h = this.heap;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.compare(h[i]!, h[parent]!) <= 0) return;
      [h[i], h[parent]] = [h[parent]!, h[i]!];
      i = parent;
    }
  }

  private down(i: number): void {
    const h = this.heap;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let top = i;
      if (l < h.length && this.compare(h[l]!, h[top]!) > 0) top = l;
      if (r < h.length && this.compare(h[r]!, h[top]!) > 0) top = r;
      if (top === i) return;
      [h[i], h[top]] = [h[top]!, h[i]!];
      i = top;
    }
  }
}
