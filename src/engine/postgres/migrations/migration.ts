// The shape of a migration, apart from the list (index.ts) so each migration file can use it
// without importing the list that imports it.

/**
 * A forward-only schema change. `up` receives the quoted schema identifier and returns SQL that
 * runs inside the migrator's transaction. Versions are dense and never edited once released:
 * a change is a new migration.
 */
export interface Migration {
  readonly version: number;
  readonly name: string;
  up(quotedSchema: string): string;
}
