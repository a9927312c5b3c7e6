import {useCallback, useEffect, useId, useMemo, useState} from 'react'
import type {Agent} from '../../api'
import {LockIcon} from '../../components/Icons'
import {tabPanel, Tabs} from '../../components/Tabs'
import {grantsTitle} from '../../lib/sandbox'
import {placeMarkers, runsFromEvents, runTitle} from '../../lib/runs'
import {attentionReason, runsOf} from '../../lib/groups'
import {isLive} from '../../lib/status'
import {clock} from '../../lib/time'
import {useAgentEvents, useEngineDown, useSettings} from '../../state/queries'
import {AgentActions} from '../agents/AgentActions'
import {StatusBadge} from '../agents/StatusBadge'
import {AgentEvents} from './AgentEvents'
import {AttentionLine} from './AttentionLine'
import {BudgetPanel} from './BudgetPanel'
import {DiffView} from './DiffView'
import {WorktreeBadge} from './WorktreeBadge'
import {LogView} from './LogView'
import {QuestionPanel, RulesPanel} from './QuestionPanel'
import {RecordFields} from './RecordFields'
import {ReplyBox} from './ReplyBox'
import {currentMatch, SearchBar, step} from './search'
import {StreamView} from './StreamView'
import {UsagePanel} from './UsagePanel'
import {UsageNow, UsageStrip} from './UsageStrip'
import {useLogLines} from './useLogLines'
import {useStatsHistory} from './useStatsHistory'

type Tab = 'log' | 'diff' | 'usage' | 'record' | 'events'
const TAB_LABELS: Record<Exclude<Tab, 'log'>, string> = {diff: 'Diff', usage: 'Usage', record: 'Record', events: 'Events'}

const WRAP = 'shepherd.logWrap'
function storedWrap(): boolean {
  try {
    return localStorage.getItem(WRAP) !== 'false'
  } catch {
    return true
  }
}

/** One agent: its live log (readable or raw, run by run, searchable), its record and its events. */
export function AgentDetail({agent, onClose}: {agent: Agent; onClose: () => void}) {
  const [tab, setTab] = useState<Tab>('log')
  const [raw, setRaw] = useState(false)
  const [wrap, setWrap] = useState(storedWrap)
  const [search, setSearch] = useState('')
  const [current, setCurrent] = useState(-1)
  const [total, setTotal] = useState(0)
  const [jump, setJump] = useState<{seq: number; run: number} | null>(null)
  const {lines, starts, error} = useLogLines(agent.projectId, agent.id)
  const {data: events = []} = useAgentEvents(agent.projectId, agent.id)
  const samples = useStatsHistory(agent)
  const staleSec = useSettings(agent.projectId).data?.staleThresholdSec
  const runs = useMemo(() => runsFromEvents(events, agent.id, staleSec), [events, agent.id, staleSec])
  const markers = useMemo(() => placeMarkers(runs, lines, starts), [runs, lines, starts])
  const down = useEngineDown()
  const stream = agent.profile === 'claude-stream-json'
  const conversation = stream && !raw

  // A new search starts at its latest match — counted "N / N" at once, never "0 / N" — and a view reporting
  // fewer matches keeps the current one in range (derived here, so no render shows it out of range).
  useEffect(() => setCurrent(-1), [search, conversation])
  const shown = currentMatch(current, total)
  const onMatches = useCallback((n: number) => setTotal(n), [])
  const onStep = (dir: 1 | -1) => setCurrent(step(shown, total, dir))
  const toggleWrap = (w: boolean) => {
    setWrap(w)
    try {
      localStorage.setItem(WRAP, String(w))
    } catch {
      // not remembered
    }
  }
  const startError = agent.error && !isLive(agent) && agent.status !== 'failed' ? agent.error : ''
  const tabIds = useId()
  const tabs = (agent.workspace?.worktree ? ['log', 'diff', 'usage', 'record', 'events'] as Tab[] : ['log', 'usage', 'record', 'events'] as Tab[])
    .map((t) => ({id: t, label: t === 'log' ? (conversation ? 'Conversation' : 'Log') : TAB_LABELS[t]}))

  return (
    <section className="detail" aria-label={`Agent ${agent.id}`}>
      <header className="detail-head">
        <h2 title={agent.name ? `${agent.name} (${agent.id})` : agent.id}>
          <span className="detail-name">{agent.name || agent.id}</span>{agent.name && <span className="agent-id">{agent.id}</span>}
        </h2>
        <StatusBadge agent={agent} withDetail={!startError} title/>
        {agent.sandbox && (
          <span className="sandboxed" title={grantsTitle(agent.sandbox)}><LockIcon/> sandboxed</span>
        )}
        <WorktreeBadge agent={agent} onOpen={() => setTab('diff')}/>
        <UsageNow agent={agent} samples={samples} onOpen={() => setTab('usage')}/>
        <AgentActions agent={agent}/>
        <button type="button" className="icon" aria-label="Close detail" title="Close (Esc)" onClick={onClose}>×</button>
      </header>
      {startError && !attentionReason(agent) && <p className="start-error" role="alert">{startError}</p>}
      <AttentionLine agent={agent} error={startError}/>
      <BudgetPanel agent={agent}/>
      <QuestionPanel agent={agent}/>
      <UsageStrip agent={agent} onOpen={() => setTab('usage')}/>
      <div className="tabs">
        <Tabs label="Show" tabs={tabs} selected={tab} onSelect={setTab} idBase={tabIds}/>
        {tab === 'log' && (
          <span className="tab-tools">
            {runs.length > 0 && (
              <select aria-label="Jump to a run" className="run-picker" value=""
                onChange={(e) => setJump({seq: (jump?.seq ?? 0) + 1, run: Number(e.target.value)})}>
                <option value="" disabled>{runsOf(agent, runs.length)} run{runsOf(agent, runs.length) === 1 ? '' : 's'} — jump to…</option>
                {runs.slice().reverse().map((r) => (
                  <option key={r.n} value={r.n} disabled={!markers.some((m) => m.run.n === r.n)}>
                    {runTitle(r)} · {clock(r.startedAt)}
                  </option>
                ))}
              </select>
            )}
            {stream && (
              <label className="check" title="The log as written, line by line">
                <input type="checkbox" checked={raw} onChange={(e) => setRaw(e.target.checked)}/> Raw
              </label>
            )}
            {!conversation && (
              <label className="check" title="Wrap long lines instead of scrolling sideways">
                <input type="checkbox" checked={wrap} onChange={(e) => toggleWrap(e.target.checked)}/> Wrap
              </label>
            )}
            <SearchBar value={search} onChange={setSearch} onStep={onStep} current={shown} total={total}
              label={conversation ? 'Search the conversation' : 'Search the log'}/>
          </span>
        )}
      </div>
      <div className="tab-panel" {...tabPanel(tabIds, tab)}>
        {tab === 'log' && error && !down && <p className="field-error">{error}</p>}
        {tab === 'log' && (conversation
          ? <StreamView lines={lines} markers={markers} search={search} current={shown} onMatches={onMatches} jump={jump}/>
          : <LogView lines={lines} markers={markers} search={search} current={shown} onMatches={onMatches} jump={jump} wrap={wrap}/>)}
        {tab === 'diff' && agent.workspace?.worktree && <DiffView agent={agent}/>}
        {tab === 'usage' && <UsagePanel agent={agent} samples={samples}/>}
        {tab === 'record' && <><RulesPanel agent={agent}/><RecordFields agent={agent}/></>}
        {tab === 'events' && <AgentEvents projectId={agent.projectId} agentId={agent.id}/>}
      </div>
      {tab === 'log' && <ReplyBox agent={agent}/>}
    </section>
  )
}
