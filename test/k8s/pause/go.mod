module gatehouse.local/pause

go 1.24.0
