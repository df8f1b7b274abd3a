function add(a, b) { return a + b; }
let s = 0;
for (let i = 0; i < 2000; i++) s = add(s, i);
console.log(s);
