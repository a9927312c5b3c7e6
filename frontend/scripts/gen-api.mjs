// The frontend's types of the engine's API, made from its description
// (backend/api/openapi.json) with openapi-typescript. `npm run gen:api`
// writes src/api/schema.gen.ts; `go generate ./backend/api` runs it after
// writing the description; src/api/schema.test.ts fails when the file is not
// what the description makes.
import {readFile, writeFile} from 'node:fs/promises'
import {fileURLToPath} from 'node:url'
import openapiTS, {COMMENT_HEADER, astToString} from 'openapi-typescript'

export const DESCRIPTION = fileURLToPath(new URL('../../backend/api/openapi.json', import.meta.url))
export const OUTPUT = fileURLToPath(new URL('../src/api/schema.gen.ts', import.meta.url))

/** The generated TypeScript of the description at path. */
export async function generate(path = DESCRIPTION) {
  const ast = await openapiTS(JSON.parse(await readFile(path, 'utf8')), {silent: true})
  return COMMENT_HEADER + astToString(ast)
}

/** The checked-in generated file. */
export const current = () => readFile(OUTPUT, 'utf8')

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await writeFile(OUTPUT, await generate())
}
