export namespace app {
	
	export interface Agent {
	    id: string;
	    projectId: string;
	    name?: string;
	    command: string;
	    args: string[];
	    env?: Record<string, string>;
	    cwd: string;
	    profile: string;
	    resumeArgs?: string[];
	    sessionId?: string;
	    completionPattern?: string;
	    errorPattern?: string;
	    keepAlive: boolean;
	    autoStartOnRestore: boolean;
	    timeoutSec: number;
	    graceSec: number;
	    resumePrompt?: string;
	    status: string;
	    exitReason?: string;
	    exitCode?: number;
	    signal?: string;
	    error?: string;
	    pid?: number;
	    processStartTime?: number;
	    shimPid?: number;
	    shimStartTime?: number;
	    bootId?: string;
	    previousStatus?: string;
	    desired: string;
	    attached: boolean;
	    // Go type: time
	    createdAt: any;
	    // Go type: time
	    startedAt?: any;
	    // Go type: time
	    stoppedAt?: any;
	    // Go type: time
	    lastActivityAt?: any;
	    restartCount: number;
	    restartFailureCount: number;
	    // Go type: time
	    nextRestartAt?: any;
	    autoResumeCount: number;
	    resumeCount: number;
	    // Go type: time
	    pausedAt?: any;
	    pauseNote?: string;
	    pausedWithProject?: boolean;
	    queueSeq?: number;
	    queuedAction?: string;
	    queuedFrom?: string;
	    staleCheck?: boolean;
	    parent?: string;
	    credentialHash?: string;
	    stopWithParent?: boolean;
	    sandbox?: sandbox.Grants;
	    workspace?: workspace.Workspace;
	    stale?: boolean;
	    onStale?: string;
	    // Go type: time
	    acknowledgedAt?: any;
	    ackLoop?: string;
	    logPath: string;
	    activity?: store.Activity;
	    queuePosition?: number;
	    stats?: store.Stats;
	    attention?: string;
	    lastResult?: store.RunFigures;
	    totals?: store.RunFigures;
	    maxBudgetUsd?: number;
	    maxTurns?: number;
	    budgetPause?: string;
	    budgetOnce?: boolean;
	}
	export interface EngineStatus {
	    state: string;
	    url: string;
	    pid: number;
	    dataDir: string;
	    message?: string;
	}
	export interface ProjectInfo {
	    id: string;
	    name: string;
	    path: string;
	    // Go type: time
	    createdAt: any;
	    loaded: boolean;
	    agents: number;
	    running: number;
	    attention: number;
	    paused: boolean;
	    // Go type: time
	    pausedAt?: any;
	    pauseNote?: string;
	    pauseProblem?: string;
	    live: number;
	    queued: number;
	    maxRunning: number;
	    folderMissing?: string;
	    totals?: store.RunFigures;
	    costToday: number;
	    dailyBudgetUsd?: number;
	    budgetHeld?: boolean;
	}
	export interface StopResult {
	    agentId: string;
	    record?: Agent;
	    error?: string;
	}

}

export namespace logfollow {
	
	export interface Chunk {
	    lines: string[];
	    offset: number;
	}

}

export namespace prefs {
	
	export interface Prefs {
	    stopAgentsOnQuit: boolean;
	    startAtLogin: boolean;
	}

}

export namespace sandbox {
	
	export interface Grants {
	    network: boolean;
	    writeDirs: string[];
	    permissions: string[];
	}
	export interface Support {
	    os: string;
	    landlock: boolean;
	    landlockAbi?: number;
	    landlockError?: string;
	    netns: boolean;
	    netnsError?: string;
	    seatbelt: boolean;
	    seatbeltError?: string;
	}

}

export namespace store {
	
	export interface Activity {
	    state: string;
	    // Go type: time
	    since?: any;
	    tool?: string;
	    // Go type: time
	    toolSince?: any;
	    waiting?: string;
	    needsYou?: boolean;
	    // Go type: time
	    until?: any;
	}
	export interface Event {
	    // Go type: time
	    time: any;
	    event: string;
	    agentId?: string;
	    from?: string;
	    to?: string;
	    reason?: string;
	    data?: Record<string, any>;
	}
	export interface Project {
	    id: string;
	    name: string;
	    path: string;
	    // Go type: time
	    createdAt: any;
	}
	export interface RunFigures {
	    runs: number;
	    turns: number;
	    durationMs: number;
	    costUsd?: number;
	    inputTokens: number;
	    cachedInputTokens: number;
	    outputTokens: number;
	    reasoningOutputTokens?: number;
	    // Go type: time
	    at?: any;
	    key?: string;
	}
	export interface Stats {
	    cpuPercent?: number;
	    rssBytes: number;
	    processes: number;
	    // Go type: time
	    sampledAt: any;
	}

}

export namespace supervisor {
	
	export interface AgentOutcome {
	    agentId: string;
	    outcome: string;
	    status: string;
	    exitCode?: number;
	    detail?: string;
	    recovery?: string;
	}
	export interface AgentRef {
	    projectId: string;
	    agentId: string;
	}
	export interface AgentSpec {
	    id: string;
	    name?: string;
	    command: string;
	    args?: string[];
	    env?: Record<string, string>;
	    cwd?: string;
	    profile?: string;
	    resumeArgs?: string[];
	    completionPattern?: string;
	    errorPattern?: string;
	    keepAlive?: boolean;
	    autoStartOnRestore?: boolean;
	    timeoutSec?: number;
	    graceSec?: number;
	    staleCheck?: boolean;
	    onStale?: string;
	    parent?: string;
	    stopWithParent?: boolean;
	    permissions?: string[];
	    maxBudgetUsd?: number;
	    maxTurns?: number;
	    workspace?: workspace.Workspace;
	}
	export interface CorruptRecord {
	    agentId: string;
	    movedTo: string;
	    problem: string;
	}
	export interface ResolveResult {
	    committed?: string;
	    conflicts: string[];
	    clean?: boolean;
	    head?: string;
	    resumed?: boolean;
	    instruction?: string;
	    status?: string;
	    queuePosition?: number;
	}
	export interface Settings {
	    watchdogIntervalSec: number;
	    staleCheckIntervalSec: number;
	    staleThresholdSec: number;
	    busyThresholdSec: number;
	    resultGraceSec: number;
	    autoResumeLimit: number;
	    pausedExpiryDays: number;
	    safePointWaitSec: number;
	    maxRunning: number;
	    notifyNative: boolean;
	    notifyCompletion: boolean;
	    dailyBudgetUsd: number;
	    worktreeSetup?: string;
	}
	export interface SyncSummary {
	    projectId: string;
	    total: number;
	    counts: Record<string, number>;
	    agents: AgentOutcome[];
	    corrupt?: CorruptRecord[];
	}
	export interface WhileClosed {
	    // Go type: time
	    at: any;
	    projects: SyncSummary[];
	}
	export interface WorktreeView {
	    projectId: string;
	    agentId: string;
	    status: workspace.Status;
	}

}

export namespace workspace {
	
	export interface Change {
	    path: string;
	    status: string;
	}
	export interface ConflictError {
	    branch: string;
	    base: string;
	    files: string[];
	    committed?: string;
	}
	export interface Line {
	    op: string;
	    text: string;
	}
	export interface Hunk {
	    header: string;
	    oldStart: number;
	    oldLines: number;
	    newStart: number;
	    newLines: number;
	    lines: Line[];
	}
	export interface FileDiff {
	    path: string;
	    oldPath?: string;
	    status: string;
	    added: number;
	    deleted: number;
	    binary?: boolean;
	    mode?: string;
	    note?: string;
	    hunks: Hunk[];
	}
	export interface Diff {
	    base: string;
	    from: string;
	    files: FileDiff[];
	    added: number;
	    deleted: number;
	    truncated: boolean;
	}
	
	
	
	export interface MergePlan {
	    branch: string;
	    base: string;
	    repo: string;
	    ahead: number;
	    behind: number;
	    uncommitted: Change[];
	    message: string;
	    identity?: string;
	    merging: boolean;
	    conflicts?: string[];
	    upToDate: boolean;
	    blocked?: string;
	    running?: string;
	}
	export interface MergeResult {
	    committed?: string;
	    merged: boolean;
	    upToDate?: boolean;
	    fastForward?: boolean;
	    head?: string;
	    conflict?: ConflictError;
	}
	export interface Status {
	    branch: string;
	    base: string;
	    ahead: number;
	    behind: number;
	    dirty: boolean;
	    merging?: boolean;
	    conflicts?: string[];
	    problem?: string;
	}
	export interface Workspace {
	    worktree: boolean;
	    base?: string;
	    repo?: string;
	    path?: string;
	    branch?: string;
	    baseCommit?: string;
	    gitDir?: string;
	    commonDir?: string;
	    repoGitDir?: string;
	    problem?: string;
	    warning?: string;
	    ahead: number;
	    behind: number;
	    dirty: boolean;
	    merging?: boolean;
	    conflicts?: string[];
	    // Go type: time
	    checkedAt?: any;
	}

}

