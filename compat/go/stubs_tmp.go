package main
var kcatDriver = driver{}
