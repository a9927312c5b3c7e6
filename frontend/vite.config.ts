/// <reference types="vitest/config" />
import {defineConfig} from 'vite'
import react from '@vitejs/plugin-react'

export default defineConfig({
  plugins: [react()],
  // The pushed events are checked against the engine's description, which
  // lives with the engine's code (src/api/check.ts imports it).
  server: {fs: {allow: ['.', '../backend/api/openapi.json']}},
  test: {
    environment: 'jsdom',
    setupFiles: ['./src/test/setup.ts'],
    include: ['src/**/*.test.{ts,tsx}'],
  },
})
