// The one door from the UI to Go. Components import this module, never the
// generated wailsjs bindings, so that tests can vi.mock it and the bindings'
// untyped corners stay in one place.
import * as App from '../../wailsjs/go/app/App'
import type {app} from '../../wailsjs/go/models'

export type EngineStatus = app.EngineStatus

/** The version of the running Shepherd build. */
export function getVersion(): Promise<string> {
  return App.Version()
}

/** The engine embedded in the window (its API URL), or why it is not running. */
export function getEngine(): Promise<EngineStatus> {
  return App.Engine()
}
