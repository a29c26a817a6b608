# Crystal on the drop-in: a program whose compiler and runtime both run on
# libgc.so.1 (scripts/dropin/run-tests.sh builds it with `crystal build`,
# the compiler on the library under test, then runs it there). Each line
# printed is a checked result; the same on both libraries.
require "big"
require "json"
require "weak_ref"

class Node
  property left : Node?
  property right : Node?
  getter value : Int32

  def initialize(@value, @left = nil, @right = nil)
  end
end

def make_tree(depth : Int32, v : Int32) : Node
  return Node.new(v) if depth == 0
  Node.new(v, make_tree(depth - 1, 2 * v), make_tree(depth - 1, 2 * v + 1))
end

def sum_tree(n : Node?) : Int64
  return 0_i64 unless n
  n.value.to_i64 + sum_tree(n.left) + sum_tree(n.right)
end

class Counted
  @@finalized = Atomic(Int32).new(0)

  def self.finalized
    @@finalized.get
  end

  def finalize
    @@finalized.add(1)
  end
end

# Binary trees: a long-lived tree while short-lived ones come and go.
long = make_tree(16, 1)
short = 0_i64
200.times { |i| short += sum_tree(make_tree(10, i)) }
puts "trees: #{sum_tree(long)} #{short}"

# A big live hash of strings, rebuilt keys looked up after more churn.
h = {} of String => Array(Int32)
200_000.times { |i| h["key-#{i}"] = [i, i * 2] }
50.times { Array.new(10_000) { |j| j.to_s } }
s = 0_i64
200_000.times { |i| s += h["key-#{i}"][1] }
puts "hash: #{h.size} #{s}"

# Strings, builders, symbols of text.
text = String.build { |io| 20_000.times { |i| io << "word" << i % 97 << ' ' } }
words = text.split
puts "strings: #{text.bytesize} #{words.size} #{words.uniq.size} #{words.sort.last}"

# Fibers and channels (the main thread's stack bottom moves at each switch).
ch = Channel(Int64).new
20.times do |f|
  spawn do
    acc = 0_i64
    300.times do |i|
      acc += Array.new(50) { |j| (i + j + f).to_i64 }.sum
      Fiber.yield if i % 50 == 0
    end
    ch.send acc
  end
end
total = 0_i64
20.times { total += ch.receive }
puts "fibers: #{total}"

# Deep recursion on a fiber's own stack.
def depth(n : Int32) : Int32
  n == 0 ? 0 : 1 + depth(n - 1)
end

done = Channel(Int32).new
spawn { done.send depth(20_000) }
puts "deep: #{done.receive}"

# Bignums (GMP's memory comes from the collector).
f = BigInt.new(1)
(1..400).each { |i| f *= i }
puts "bignum: #{f.to_s.size} #{f.to_s[0, 20]} #{f % 1_000_000_007}"

# JSON round trip.
data = (1..2000).map { |i| {"id" => i, "name" => "n#{i}", "tags" => ["a", "b#{i % 7}"]} }
json = data.to_json
back = JSON.parse(json)
puts "json: #{json.bytesize} #{back.as_a.size} #{back[1999]["name"]} #{back.as_a.sum { |e| e["id"].as_i }}"

# Exceptions with backtraces.
caught = 0
1000.times do |i|
  begin
    raise ArgumentError.new("bad #{i}") if i % 3 == 0
  rescue e : ArgumentError
    caught += 1 if e.message.try &.starts_with?("bad")
  end
end
puts "exceptions: #{caught}"

# Finalizers and weak references after explicit collections.
2000.times { Counted.new }
w = WeakRef.new(Array.new(100, 7))
GC.collect
GC.collect
v = w.value
puts "finalizers ran: #{Counted.finalized > 0}"
puts "weak: #{v.nil? || v.sum == 700}"
puts "long tree still: #{sum_tree(long)}"
