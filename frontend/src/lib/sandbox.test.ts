import {describe, expect, it} from 'vitest'
import {grantsText, missingFor, supportText, tagsOf, UNSANDBOXED, valuesOfGrants} from './sandbox'

const linux = {os: 'linux', landlock: true, landlockAbi: 6, netns: true, seatbelt: false}

describe('sandbox', () => {
  it('turns the form into tags: null when not sandboxed, an array (maybe empty) when it is', () => {
    expect(tagsOf(UNSANDBOXED)).toBeNull()
    expect(tagsOf({...UNSANDBOXED, sandboxed: true})).toEqual([])
    expect(tagsOf({sandboxed: true, network: true, writeDirs: ['/a', ' /b ', ''], otherTags: ['@read:*']}))
      .toEqual(['@network', '@write:/a', '@write:/b', '@read:*'])
  })

  it('reads a record’s grants back, from its folders or its tags', () => {
    expect(valuesOfGrants(undefined)).toEqual(UNSANDBOXED)
    expect(valuesOfGrants({network: false, writeDirs: null, permissions: ['@write:/x', '@read:/etc']}))
      .toEqual({sandboxed: true, network: false, writeDirs: ['/x'], otherTags: ['@read:/etc']})
  })

  it('says the grants in words', () => {
    expect(grantsText({network: false, writeDirs: []})).toBe('no network; writes only to its log')
    expect(grantsText({network: true, writeDirs: ['/a', '/b']})).toBe('network; writes in /a, /b')
  })

  it('says what the machine lacks, as the engine checks it', () => {
    expect(missingFor(linux, false)).toEqual([])
    expect(missingFor({...linux, netns: false}, true)).toEqual([])
    expect(missingFor({...linux, netns: false, netnsError: 'EPERM'}, false)).toEqual(['network namespaces, which take the network away (EPERM)'])
    expect(missingFor({...linux, landlock: false}, true)).toEqual(['Landlock, which limits writes to the chosen folders (reason unknown)'])
    expect(missingFor({os: 'darwin', landlock: false, netns: false, seatbelt: true}, false)).toEqual([])
    expect(missingFor({os: 'windows', landlock: false, netns: false, seatbelt: false}, true)[0]).toMatch(/Linux and macOS/)
    expect(missingFor(undefined, false)).toEqual([])
  })

  it('says what the machine enforces in a line', () => {
    expect(supportText(linux)).toEqual({text: 'Landlock (ABI 6) limits writes; network namespaces take the network away.', ok: true})
    expect(supportText({...linux, netns: false, netnsError: 'user namespaces are off'}))
      .toEqual({text: 'Landlock (ABI 6) limits writes; no network namespaces (user namespaces are off).', ok: false})
    expect(supportText({os: 'darwin', landlock: false, netns: false, seatbelt: true}).ok).toBe(true)
  })
})
