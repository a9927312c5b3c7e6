import {useQuery} from '@tanstack/react-query'
import {api} from '../../api'
import {windowText} from '../../lib/answers'

/**
 * The header's "5-hour: 82 % · resets 14:00" for each account whose runs said so; nothing when unknown.
 * Read again when a run ends (ended: the latest end among the agents shown) and every minute.
 */
export function UsageWindows({ended}: {ended: string}) {
  const {data} = useQuery({queryKey: ['usage', ended], queryFn: api.usage, refetchInterval: 60_000, retry: false,
    placeholderData: (prev) => prev})
  const texts = (data ?? []).flatMap((acct) => (acct.windows ?? []).map((w) => ({acct: acct.account, w, text: windowText(w)})))
    .filter((x) => x.text)
  if (texts.length === 0) return null
  return (
    <span className="usage-windows" data-usage-windows
      title={`Subscription windows, as the agents' last runs reported them\n${texts.map((x) => `${x.acct.replace(/:$/, '')}: ${x.text}`).join('\n')}`}>
      {texts.map((x) => (
        <span key={x.acct + x.w.name} className={x.w.status === 'rejected' ? 'usage-window bad' : x.w.status === 'allowed_warning' ? 'usage-window warn' : 'usage-window'}>
          {x.text}
        </span>
      ))}
    </span>
  )
}
