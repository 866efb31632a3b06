module github.com/promptcanvas/promptcanvas/client

go 1.24
