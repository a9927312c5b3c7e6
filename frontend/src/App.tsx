import {Welcome} from './screens/welcome/Welcome'

export default function App() {
  return <Welcome/>
}
