import pg from 'pg'

/** Makes (or empties) a database on the platform's PostgreSQL; returns its URL. */
export async function createDatabase(platformUrl: string, name: string): Promise<string> {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a database name: ${name}`)
  const admin = new pg.Client({ connectionString: platformUrl })
  await admin.connect()
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    await admin.query(`CREATE DATABASE ${name}`)
  } finally {
    await admin.end()
  }
  const url = new URL(platformUrl)
  url.pathname = `/${name}`
  return url.toString()
}

/** A client of the platform's job record, for tests that look at the rows. */
export function databaseClient(url: string): pg.Pool {
  return new pg.Pool({ connectionString: url, max: 4 })
}
