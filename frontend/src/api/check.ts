// Pushed events arrive unasked, from another process that may be another
// version (an engine left running across an upgrade): each payload is
// checked against its schema in the engine's own description before it
// reaches the cache. The check is derived from backend/api/openapi.json, not
// copied: types, required fields, lists and maps, nested; fields it does not
// know are let through (a newer engine sends more).
import description from '../../../backend/api/openapi.json'

interface Schema {
  type?: string | string[]
  $ref?: string
  properties?: Record<string, Schema>
  required?: string[]
  items?: Schema
  additionalProperties?: Schema | boolean
}

const schemas = (description as unknown as {components: {schemas: Record<string, Schema>}}).components.schemas

/** The schema of one pushed event's payload, by the event's name; undefined: none described. */
export function eventSchema(name: string): Schema | undefined {
  return schemas.EventPayloads.properties?.[name]
}

function typeOf(v: unknown): string {
  if (v === null) return 'null'
  if (Array.isArray(v)) return 'array'
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number'
  return typeof v
}

/** What is wrong with value against schema (empty: nothing), each as "path: what". */
export function problems(value: unknown, schema: Schema, path = '$', depth = 0): string[] {
  if (schema.$ref) {
    const target = schemas[schema.$ref.replace('#/components/schemas/', '')]
    return target && depth < 32 ? problems(value, target, path, depth + 1) : [`${path}: unknown schema ${schema.$ref}`]
  }
  if (schema.type) {
    const want = Array.isArray(schema.type) ? schema.type : [schema.type]
    const got = typeOf(value)
    const ok = want.includes(got) || (got === 'integer' && want.includes('number'))
    if (!ok) return [`${path}: ${got}, want ${want.join(' or ')}`]
  }
  if (value === null || typeof value !== 'object') return []
  if (Array.isArray(value)) {
    return schema.items ? value.flatMap((v, i) => problems(v, schema.items!, `${path}[${i}]`, depth + 1)) : []
  }
  const obj = value as Record<string, unknown>
  const out: string[] = []
  for (const k of schema.required ?? []) {
    if (obj[k] === undefined) out.push(`${path}.${k}: missing`)
  }
  for (const [k, v] of Object.entries(obj)) {
    const s = schema.properties?.[k] ?? (typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined)
    if (s && v !== undefined) out.push(...problems(v, s, `${path}.${k}`, depth + 1))
  }
  return out
}
