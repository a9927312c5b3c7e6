// The one door from the UI to Go. Components import this module, never the
// generated wailsjs bindings, so that tests can vi.mock it and the bindings'
// untyped corners stay in one place.
import * as App from '../../wailsjs/go/app/App'

/** The version of the running Shepherd build. */
export function getVersion(): Promise<string> {
  return App.Version()
}
