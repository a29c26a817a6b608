(* binary-trees (Benchmarks Game). usage: binary_trees N *)
type tree = Leaf | Node of tree * tree

let rec make d = if d = 0 then Node (Leaf, Leaf) else Node (make (d - 1), make (d - 1))
let rec check = function Leaf -> 0 | Node (l, r) -> 1 + check l + check r

let () =
  let n = if Array.length Sys.argv > 1 then int_of_string Sys.argv.(1) else 10 in
  let min_depth = 4 in
  let max_depth = max (min_depth + 2) n in
  let total = ref (check (make (max_depth + 1))) in
  let long_lived = make max_depth in
  let d = ref min_depth in
  while !d <= max_depth do
    for _ = 1 to 1 lsl (max_depth - !d + min_depth) do
      total := !total + check (make !d)
    done;
    d := !d + 2
  done;
  total := !total + check long_lived;
  let s = Gc.quick_stat () in
  Printf.printf "RESULT {\"check\": %d, \"collections\": %d}\n" !total
    (s.Gc.minor_collections + s.Gc.major_collections)
