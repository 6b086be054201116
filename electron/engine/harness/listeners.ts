/** A set of listeners of one kind; `add` returns the unsubscribe (the contract's `onX` shape). */
export class Listeners<A extends unknown[]> {
  private readonly set = new Set<(...args: A) => void>();

  add(listener: (...args: A) => void): () => void {
    this.set.add(listener);
    return () => this.set.delete(listener);
  }

  emit(...args: A): void {
    for (const l of this.set) l(...args);
  }
}
