export namespace app {
	
	export interface EngineStatus {
	    state: string;
	    url: string;
	    pid: number;
	    dataDir: string;
	    message?: string;
	    alerts?: supervisor.Alert[];
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

export namespace supervisor {
	
	export interface Alert {
	    kind: string;
	    message: string;
	    path?: string;
	    freeBytes: number;
	    totalBytes: number;
	    // Go type: time
	    since: any;
	}

}

