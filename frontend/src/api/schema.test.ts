// @vitest-environment node
import {describe, expect, it} from 'vitest'
// @ts-expect-error: a plain ES module script, without type declarations
import {current, generate} from '../../scripts/gen-api.mjs'

describe('the API types', () => {
  // schema.gen.ts is what openapi-typescript makes of the engine's
  // description (backend/api/openapi.json, itself checked against the Go
  // types): `go generate ./backend/api` or `npm run gen:api` after a change.
  it('are what the checked-in description makes', async () => {
    const want: string = await generate()
    const got: string = await current()
    expect(got === want, 'src/api/schema.gen.ts is stale: run `go generate ./backend/api` (or `npm run gen:api`)').toBe(true)
  }, 30_000)
})
