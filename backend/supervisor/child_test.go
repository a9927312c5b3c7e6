package supervisor

func runChildEngine() int { return 0 }
