# k-way split probe of a box dumped by the session-8 debug hook (session 8, issue 7): for each
# dimension and k in 2, 4, 8, 16 the worst piece's plain-CROWN bound of prop_1 (3.991 - Y_0).
# /usr/bin/python3 probe.py NET "l0 u0 l1 u1 ... l4 u4"
import sys, torch
from acas import *; from crown import *
torch.set_num_threads(1)
fwd,sub,layers=load(sys.argv[1]); W0,b0=layers[0]; L=[(W0,b0-W0@sub)]+layers[1:]
v=list(map(float,sys.argv[2].split())); xl=torch.tensor(v[0::2],dtype=torch.float64); xu=torch.tensor(v[1::2],dtype=torch.float64)
C=torch.zeros(1,5,dtype=torch.float64); C[0,0]=-1; rhs=torch.tensor([-3.991125645861615],dtype=torch.float64)
def bnd(a,b):
    with torch.no_grad():
        bounds,rel=layer_bounds(L,a,b); lb,A=final(L,C,rhs,a,b,bounds,rel)
    return lb[:,0]
print('box bound %.3f'%float(bnd(xl[None],xu[None])))
with torch.no_grad():
    s=xl+(xu-xl)*torch.rand(20000,5,dtype=torch.float64); print('sampled min margin %.3f'%float((3.991125645861615-fwd(s)[:,0]).min()))
for d in range(5):
    out=[]
    for k in (2,4,8,16):
        t=torch.linspace(0,1,k+1,dtype=torch.float64); a=xl.repeat(k,1); b=xu.repeat(k,1)
        a[:,d]=xl[d]+(xu[d]-xl[d])*t[:-1]; b[:,d]=xl[d]+(xu[d]-xl[d])*t[1:]
        lb=bnd(a,b); out.append('%d: %.2f [%s]'%(k,float(lb.min()),' '.join('%.1f'%q for q in lb[:8])))
    print('dim',d,' | '.join(out))
