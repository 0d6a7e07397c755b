/**
 * A forward-only schema change. `up` receives the quoted schema identifier and returns SQL that
 * runs inside the migrator's transaction. Versions are dense and never edited once released:
 * a change is a new migration. (Its own module so the migrations and their list, index.ts, do
 * not import each other.)
 */
export interface Migration {
  readonly version: number;
  readonly name: string;
  up(quotedSchema: string): string;
}
