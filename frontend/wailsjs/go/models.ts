export namespace app {
	
	export interface EngineStatus {
	    url: string;
	    pid: number;
	    dataDir: string;
	}

}

