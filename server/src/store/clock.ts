/**
 * @module
 * The database's clock as this node last saw it. Leases are decided in SQL with the database's
 * time (`phrases.nowMs`), so nodes with skewed clocks agree on them; statements that read that time
 * report it here, and the node uses the offset wherever it shows or estimates a database time
 * without a round trip (`server_time` in frames, a session's guess at its free capacity).
 */
export class DatabaseClock {
  private offsetMs = 0;

  /** A database time read by a statement that ran between `sentAt` and now (local clock). */
  observe(databaseNow: number, sentAt: number): void {
    const local = (sentAt + Date.now()) / 2;
    this.offsetMs = databaseNow - local;
  }

  /** The database's time now, as well as this node knows it. */
  now(): number {
    return Math.round(Date.now() + this.offsetMs);
  }
}
