import {StrictMode} from 'react'
import {createRoot} from 'react-dom/client'
import {QueryClient, QueryClientProvider} from '@tanstack/react-query'
import './style.css'
import App from './App'

// Server state is refreshed by pushed events, not by timers or focus.
const queryClient = new QueryClient({
  defaultOptions: {queries: {staleTime: Infinity, refetchOnWindowFocus: false, retry: 1}},
})

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <App/>
    </QueryClientProvider>
  </StrictMode>,
)
