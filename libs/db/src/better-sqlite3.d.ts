/** @module better-sqlite3 (minimal typings for the calls @gatehouse/db makes; the package ships none) */
declare module 'better-sqlite3' {
  namespace BetterSqlite3 {
    interface Statement {
      get(...params: unknown[]): unknown;
      all(...params: unknown[]): unknown[];
      run(...params: unknown[]): { changes: number };
      pluck(on?: boolean): Statement;
    }
    interface Database {
      pragma(source: string): unknown;
      prepare(source: string): Statement;
      close(): void;
    }
  }
  const BetterSqlite3: new (filename: string, options?: Record<string, unknown>) => BetterSqlite3.Database;
  export default BetterSqlite3;
}
